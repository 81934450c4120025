//! Header lines of `neo4j-admin database import` files, which `plexus import` reads.
//!
//! GRAMMAR
//! =======
//! A header is one record of the file (or of a separate header file); each field describes a
//! column:
//!
//! ```text
//!   column  := [name] [':' kind]
//!   kind    := role ['(' group ')'] | type ['[]']
//!   role    := ID | START_ID | END_ID | LABEL | TYPE | IGNORE      (any case)
//!   type    := int | long | short | byte | float | double | boolean | char | string
//!            | date | localtime | time | localdatetime | datetime | duration   (any case)
//! ```
//!
//! `name` alone is a string property; `name:int` a typed one; `tags:string[]` an array whose
//! elements a second delimiter (`--array-delimiter`, default `;`) separates. `id:ID(Person)`
//! is the node's identifier within the *id group* `Person` and, because it is named, also the
//! property `id`; `:ID` without a name is an identifier only. `:START_ID(Person)` and
//! `:END_ID(Person)` name a relationship's endpoints by identifiers of that group. `:LABEL`
//! holds extra labels (array-delimited) and `:TYPE` a relationship's type; `:IGNORE` columns are
//! skipped.
//!
//! Invariants of a parsed [`Header`]: a node header has exactly one `ID` column and no
//! `START_ID`/`END_ID`/`TYPE`; a relationship header has exactly one `START_ID` and one
//! `END_ID` and no `ID`/`LABEL`; property names are unique. Violations are errors naming the
//! file and the column, checked by [`Header::parse`].

use crate::error::{IngestError, IngestErrorKind, Result};

/// The value type of a property column (neo4j-admin's type names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// `int`, `long`, `short`, `byte`: a 64-bit integer in Plexus.
    Integer,
    /// `float`, `double`: a 64-bit float.
    Float,
    Boolean,
    /// `string`, `char`.
    String,
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
    Duration,
}

impl FieldType {
    fn parse(name: &str) -> Option<FieldType> {
        Some(match name.to_ascii_lowercase().as_str() {
            "int" | "long" | "short" | "byte" => FieldType::Integer,
            "float" | "double" => FieldType::Float,
            "boolean" => FieldType::Boolean,
            "string" | "char" => FieldType::String,
            "date" => FieldType::Date,
            "localtime" => FieldType::LocalTime,
            "time" => FieldType::Time,
            "localdatetime" => FieldType::LocalDateTime,
            "datetime" => FieldType::DateTime,
            "duration" => FieldType::Duration,
            _ => return None,
        })
    }
}

/// What a column holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnKind {
    /// A property (named), optionally an array of the type.
    Property {
        ty: FieldType,
        array: bool,
    },
    /// The node's identifier in an id group (`None`: the global group).
    Id {
        group: Option<String>,
    },
    StartId {
        group: Option<String>,
    },
    EndId {
        group: Option<String>,
    },
    Label,
    Type,
    Ignore,
}

/// One column of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The property name, if the column stores one (an `ID` column may be named too).
    pub name: Option<String>,
    pub kind: ColumnKind,
}

/// Whether a header describes node or relationship rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderFor {
    Nodes,
    Relationships,
}

/// A parsed header; see the module docs for its invariants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub columns: Vec<Column>,
}

impl Header {
    /// Parses the fields of a header record (`file` names the file in errors).
    pub fn parse<'a>(
        fields: impl IntoIterator<Item = Option<&'a str>>,
        target: HeaderFor,
        file: &str,
    ) -> Result<Header> {
        let error = |column: usize, message: String| {
            IngestError::new(
                IngestErrorKind::Format,
                format!("header column {}: {message}", column + 1),
            )
            .in_file(file)
            .at(1, 1)
        };
        let mut columns = Vec::new();
        for (i, field) in fields.into_iter().enumerate() {
            let field = field.unwrap_or("").trim();
            columns.push(parse_column(field).map_err(|m| error(i, m))?);
        }
        let count =
            |pred: fn(&ColumnKind) -> bool| columns.iter().filter(|c| pred(&c.kind)).count();
        let ids = count(|k| matches!(k, ColumnKind::Id { .. }));
        let starts = count(|k| matches!(k, ColumnKind::StartId { .. }));
        let ends = count(|k| matches!(k, ColumnKind::EndId { .. }));
        let labels = count(|k| matches!(k, ColumnKind::Label));
        let types = count(|k| matches!(k, ColumnKind::Type));
        let problem = match target {
            HeaderFor::Nodes if ids != 1 => Some(format!(
                "a node file needs exactly one :ID column, this header has {ids}"
            )),
            HeaderFor::Nodes if starts + ends + types > 0 => {
                Some("a node file cannot have :START_ID, :END_ID or :TYPE columns".to_string())
            }
            HeaderFor::Relationships if starts != 1 || ends != 1 => Some(format!(
                "a relationship file needs exactly one :START_ID and one :END_ID column, this \
                 header has {starts} and {ends}"
            )),
            HeaderFor::Relationships if ids + labels > 0 => {
                Some("a relationship file cannot have :ID or :LABEL columns".to_string())
            }
            _ => None,
        };
        if let Some(problem) = problem {
            return Err(IngestError::new(IngestErrorKind::Format, problem)
                .in_file(file)
                .at(1, 1));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, column) in columns.iter().enumerate() {
            if let Some(name) = &column.name
                && !seen.insert(name.as_str())
            {
                return Err(error(i, format!("the property '{name}' appears twice")));
            }
        }
        Ok(Header { columns })
    }
}

fn parse_column(field: &str) -> std::result::Result<Column, String> {
    let (name, kind) = match field.rfind(':') {
        Some(at) => (&field[..at], Some(&field[at + 1..])),
        None => (field, None),
    };
    let name = (!name.is_empty()).then(|| name.to_string());
    let Some(kind) = kind else {
        return match name {
            Some(name) => Ok(Column {
                name: Some(name),
                kind: ColumnKind::Property {
                    ty: FieldType::String,
                    array: false,
                },
            }),
            None => Err("an empty column name".to_string()),
        };
    };
    let (word, group) = match kind.find('(') {
        Some(open) => {
            let Some(inner) = kind[open + 1..].strip_suffix(')') else {
                return Err(format!("'{field}': an id group needs a closing ')'"));
            };
            if inner.is_empty() {
                return Err(format!("'{field}': an empty id group"));
            }
            (&kind[..open], Some(inner.to_string()))
        }
        None => (kind, None),
    };
    let has_group = group.is_some();
    let role = match word.to_ascii_uppercase().as_str() {
        "ID" => Some(ColumnKind::Id { group }),
        "START_ID" => Some(ColumnKind::StartId { group }),
        "END_ID" => Some(ColumnKind::EndId { group }),
        "LABEL" | "TYPE" | "IGNORE" if has_group => {
            return Err(format!(
                "'{field}': only ID, START_ID and END_ID take an id group"
            ));
        }
        "LABEL" => Some(ColumnKind::Label),
        "TYPE" => Some(ColumnKind::Type),
        "IGNORE" => Some(ColumnKind::Ignore),
        _ => None,
    };
    if let Some(role) = role {
        // A named START_ID/END_ID/LABEL/TYPE stores nothing under that name in neo4j-admin;
        // only a named ID is also a property.
        let name = match role {
            ColumnKind::Id { .. } => name,
            _ => None,
        };
        return Ok(Column { name, kind: role });
    }
    if has_group {
        return Err(format!(
            "'{field}': only ID, START_ID and END_ID take an id group"
        ));
    }
    let (type_name, array) = match word.strip_suffix("[]") {
        Some(element) => (element, true),
        None => (word, false),
    };
    let ty = FieldType::parse(type_name).ok_or_else(|| {
        format!(
            "'{field}': unknown type '{type_name}' (types: int, long, short, byte, float, double, \
             boolean, char, string, date, localtime, time, localdatetime, datetime, duration, \
             each optionally with [] for an array; roles: ID, START_ID, END_ID, LABEL, TYPE, IGNORE)"
        )
    })?;
    let Some(name) = name else {
        return Err(format!(
            "'{field}': a property column needs a name before ':'"
        ));
    };
    Ok(Column {
        name: Some(name),
        kind: ColumnKind::Property { ty, array },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(header: &str, target: HeaderFor) -> Result<Header> {
        Header::parse(header.split('|').map(Some), target, "h.csv")
    }

    fn property(name: &str, ty: FieldType, array: bool) -> Column {
        Column {
            name: Some(name.to_string()),
            kind: ColumnKind::Property { ty, array },
        }
    }

    #[test]
    fn the_snb_headers_parse() {
        let person = parse(
            "id:ID(Person)|firstName:STRING|birthday:LONG|speaks:STRING[]|length:INT|:LABEL",
            HeaderFor::Nodes,
        )
        .unwrap();
        assert_eq!(
            person.columns,
            vec![
                Column {
                    name: Some("id".into()),
                    kind: ColumnKind::Id {
                        group: Some("Person".into())
                    }
                },
                property("firstName", FieldType::String, false),
                property("birthday", FieldType::Integer, false),
                property("speaks", FieldType::String, true),
                property("length", FieldType::Integer, false),
                Column {
                    name: None,
                    kind: ColumnKind::Label
                },
            ]
        );
        let knows = parse(
            ":START_ID(Person)|:END_ID(Person)|creationDate:LONG|score:double|name",
            HeaderFor::Relationships,
        )
        .unwrap();
        assert_eq!(
            knows.columns[0].kind,
            ColumnKind::StartId {
                group: Some("Person".into())
            }
        );
        assert_eq!(knows.columns[3], property("score", FieldType::Float, false));
        assert_eq!(knows.columns[4], property("name", FieldType::String, false));
        let plain = parse(":ID|born:date|:IGNORE|ok:Boolean", HeaderFor::Nodes).unwrap();
        assert_eq!(plain.columns[0].name, None);
        assert_eq!(plain.columns[1], property("born", FieldType::Date, false));
        assert_eq!(plain.columns[2].kind, ColumnKind::Ignore);
    }

    #[test]
    fn malformed_headers_name_the_column() {
        let cases = [
            (
                "id:ID|age:integer",
                HeaderFor::Nodes,
                "h.csv:1:1: header column 2: 'age:integer': unknown type 'integer'",
            ),
            (
                "id:ID|:int",
                HeaderFor::Nodes,
                "header column 2: ':int': a property column needs a name",
            ),
            (
                "id:ID(Person|x",
                HeaderFor::Nodes,
                "header column 1: 'id:ID(Person': an id group needs a closing ')'",
            ),
            ("id:ID()|x", HeaderFor::Nodes, "an empty id group"),
            (
                ":LABEL(X)|:ID",
                HeaderFor::Nodes,
                "only ID, START_ID and END_ID take an id group",
            ),
            (
                "name|x",
                HeaderFor::Nodes,
                "exactly one :ID column, this header has 0",
            ),
            (
                ":ID|:ID(A)",
                HeaderFor::Nodes,
                "exactly one :ID column, this header has 2",
            ),
            (
                ":ID|:TYPE",
                HeaderFor::Nodes,
                "cannot have :START_ID, :END_ID or :TYPE",
            ),
            (
                ":START_ID|x",
                HeaderFor::Relationships,
                "exactly one :START_ID and one :END_ID column, this header has 1 and 0",
            ),
            (
                ":START_ID|:END_ID|:LABEL",
                HeaderFor::Relationships,
                "cannot have :ID or :LABEL",
            ),
            (
                ":ID|a|a:int",
                HeaderFor::Nodes,
                "header column 3: the property 'a' appears twice",
            ),
            (
                ":ID||x",
                HeaderFor::Nodes,
                "header column 2: an empty column name",
            ),
        ];
        for (header, target, expected) in cases {
            let err = parse(header, target).expect_err(header).to_string();
            assert!(err.contains(expected), "{header}: {err}");
        }
    }
}
