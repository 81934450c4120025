//! A Gherkin reader for the TCK's feature files: scenarios, outlines expanded into one
//! scenario per Examples row, and steps with their docstrings and tables.
//!
//! Only what the TCK uses is supported: `Feature:`, `Scenario:`, `Scenario Outline:` with
//! `Examples:` tables, steps (`Given`/`When`/`Then`/`And`/`But`), `"""` docstrings, `|` tables
//! and `#` comments. `<name>` placeholders are substituted in step text, docstrings and tables.

#[derive(Debug, Clone)]
pub struct Step {
    /// The step text after its keyword, e.g. `executing query:`.
    pub text: String,
    pub docstring: Option<String>,
    pub table: Vec<Vec<String>>,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    /// `Feature name / scenario name [row n]`, for reports.
    pub name: String,
    pub steps: Vec<Step>,
}

struct RawScenario {
    name: String,
    steps: Vec<Step>,
    examples: Vec<Vec<Vec<String>>>,
    outline: bool,
}

impl RawScenario {
    fn new(name: String, outline: bool) -> Self {
        RawScenario {
            name,
            steps: Vec::new(),
            examples: Vec::new(),
            outline,
        }
    }
}

/// Splits a `| a | b |` table row into trimmed cells (`\|` escapes a bar).
fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut current = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // Gherkin's table escapes: `\|` is a bar, `\\` a backslash, `\n` a newline.
            '\\' if matches!(chars.peek(), Some('|' | '\\' | 'n')) => {
                let escaped = chars.next();
                current.push(match escaped {
                    Some('n') => '\n',
                    Some(other) => other,
                    None => '\\',
                });
            }
            '|' => cells.push(std::mem::take(&mut current).trim().to_string()),
            _ => current.push(c),
        }
    }
    cells.push(current.trim().to_string());
    cells
}

const KEYWORDS: &[&str] = &["Given ", "When ", "Then ", "And ", "But "];

pub fn parse_feature(text: &str, file: &str) -> Vec<Scenario> {
    let mut raws: Vec<RawScenario> = Vec::new();
    let mut feature = file.to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut in_examples = false;
    // Steps of a `Background:`, run before every scenario of the feature.
    let mut background: Option<RawScenario> = None;
    let mut in_background = false;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("Feature:") {
            feature = name.trim().to_string();
        } else if line.starts_with("Background:") {
            in_background = true;
            background = Some(RawScenario::new(String::new(), false));
        } else if let Some((name, outline)) = line
            .strip_prefix("Scenario Outline:")
            .map(|n| (n, true))
            .or_else(|| line.strip_prefix("Scenario:").map(|n| (n, false)))
        {
            in_background = false;
            in_examples = false;
            raws.push(RawScenario::new(
                format!("{feature} / {}", name.trim()),
                outline,
            ));
        } else if line.starts_with("Examples:") {
            in_examples = true;
            if let Some(raw) = raws.last_mut() {
                raw.examples.push(Vec::new());
            }
        } else if line.starts_with('|') {
            let cells = table_cells(line);
            let target = if in_background {
                background.as_mut()
            } else {
                raws.last_mut()
            };
            if let Some(raw) = target {
                if in_examples {
                    if let Some(table) = raw.examples.last_mut() {
                        table.push(cells);
                    }
                } else if let Some(step) = raw.steps.last_mut() {
                    step.table.push(cells);
                }
            }
        } else if line.starts_with("\"\"\"") {
            let indent = lines[i - 1].len() - lines[i - 1].trim_start().len();
            let mut doc = Vec::new();
            while i < lines.len() && !lines[i].trim().starts_with("\"\"\"") {
                let l = lines[i];
                let cut = l.len() - l.trim_start().len();
                doc.push(&l[cut.min(indent)..]);
                i += 1;
            }
            i += 1;
            let target = if in_background {
                background.as_mut()
            } else {
                raws.last_mut()
            };
            if let Some(step) = target.and_then(|r| r.steps.last_mut()) {
                step.docstring = Some(doc.join("\n"));
            }
        } else if let Some(keyword) = KEYWORDS.iter().find(|k| line.starts_with(**k)) {
            in_examples = false;
            let target = if in_background {
                background.as_mut()
            } else {
                raws.last_mut()
            };
            if let Some(raw) = target {
                raw.steps.push(Step {
                    text: line[keyword.len()..].trim().to_string(),
                    docstring: None,
                    table: Vec::new(),
                });
            }
        }
    }
    let mut scenarios = Vec::new();
    for mut raw in raws {
        if let Some(background) = &background {
            let mut steps = background.steps.clone();
            steps.append(&mut raw.steps);
            raw.steps = steps;
        }
        if !raw.outline {
            scenarios.push(Scenario {
                name: raw.name,
                steps: raw.steps,
            });
            continue;
        }
        for table in &raw.examples {
            let Some((header, rows)) = table.split_first() else {
                continue;
            };
            for (n, row) in rows.iter().enumerate() {
                let substitute = |s: &str| {
                    let mut out = s.to_string();
                    for (key, value) in header.iter().zip(row) {
                        out = out.replace(&format!("<{key}>"), value);
                    }
                    out
                };
                let steps = raw
                    .steps
                    .iter()
                    .map(|step| Step {
                        text: substitute(&step.text),
                        docstring: step.docstring.as_deref().map(substitute),
                        table: step
                            .table
                            .iter()
                            .map(|r| r.iter().map(|c| substitute(c)).collect())
                            .collect(),
                    })
                    .collect();
                scenarios.push(Scenario {
                    name: format!("{} [row {}]", raw.name, n + 1),
                    steps,
                });
            }
        }
    }
    scenarios
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_expand_per_row() {
        let text = "Feature: F\n  Scenario Outline: s\n    When executing query:\n      \"\"\"\n      RETURN <x> AS x\n      \"\"\"\n    Then the result should be, in any order:\n      | x |\n      | <x> |\n\n    Examples:\n      | x |\n      | 1 |\n      | 2 |\n";
        let scenarios = parse_feature(text, "f");
        assert_eq!(scenarios.len(), 2);
        assert_eq!(
            scenarios[1].steps[0].docstring.as_deref(),
            Some("RETURN 2 AS x")
        );
        assert_eq!(scenarios[1].steps[1].table[1], vec!["2"]);
    }

    #[test]
    fn escaped_bars_stay_in_cells() {
        assert_eq!(table_cells("| 'a\\|b' | c |"), vec!["'a|b'", "c"]);
        assert_eq!(table_cells("| 'a\\\\b\\'' |"), vec!["'a\\b\\''"]);
    }
}
