//! The scalar functions the binder knows: names (lower-case), arities, the static types each
//! argument accepts and the type of the result. Their implementations are the executor's
//! (`plexus_exec::eval::functions`); a name the binder accepts that the executor does not
//! implement fails there as an unknown function, so the executor's tests call every name listed
//! here ([`function_names`]). Temporal functions (`date`, `duration.between`, ...) are
//! `plexus_value::temporal_fns`'s, names and code.
//!
//! ARGUMENT TYPES
//! ==============
//! The types are Neo4j 5's signatures: an argument whose static type the binder knows and that
//! its signature rejects is a compile-time `SyntaxError` (`InvalidArgumentType`, "type
//! mismatch"), as in Neo4j — `toUpper(1)`, `sqrt('x')`, `WITH 1 AS x RETURN left(x, 2)`. An
//! argument known only at run time (a property, a parameter, a list element) is checked by the
//! function itself, a run-time `TypeError`. An integer is accepted where a float is (`sqrt(4)`);
//! null is accepted everywhere. Where the TCK expects a run-time error instead, nothing is
//! checked here (`range()`'s bounds).

use crate::logical::Ty;
use plexus_value::temporal_fns;

/// One scalar function: how `SHOW FUNCTIONS` lists it, its arity and types.
#[derive(Debug)]
pub struct Signature {
    /// Its name as Neo4j spells it (matched case-insensitively), category and description.
    pub info: FunctionInfo,
    pub min_args: usize,
    pub max_args: usize,
    /// The static types argument `i` accepts (`args[i]`; an empty set, or a position past the
    /// end, accepts any type).
    pub args: &'static [&'static [Ty]],
    /// The result's static type (`Ty::Any` when it depends on the arguments).
    pub returns: Ty,
}

impl Signature {
    /// The types argument `position` accepts; empty when it takes any value.
    pub fn accepts(&self, position: usize) -> &'static [Ty] {
        self.args.get(position).copied().unwrap_or(ANY)
    }
}

const ANY: &[Ty] = &[];
pub(crate) const STRING: &[Ty] = &[Ty::String];
const INTEGER: &[Ty] = &[Ty::Int];
/// A float, or an integer (which Neo4j widens to one).
pub(crate) const NUMBER: &[Ty] = &[Ty::Float, Ty::Int];
const LIST: &[Ty] = &[Ty::List];
const STRING_OR_LIST: &[Ty] = &[Ty::String, Ty::List];
const NODE: &[Ty] = &[Ty::Node];
const REL: &[Ty] = &[Ty::Rel];
const PATH: &[Ty] = &[Ty::Path];
const ENTITY: &[Ty] = &[Ty::Node, Ty::Rel];
const MAP_OR_ENTITY: &[Ty] = &[Ty::Map, Ty::Node, Ty::Rel];
const CONTAINER: &[Ty] = &[Ty::Map, Ty::Node, Ty::Rel, Ty::String, Ty::List];
/// `toString`: Neo4j lists booleans, numbers, strings, points and temporal values.
const STRINGABLE: &[Ty] = &[Ty::Bool, Ty::Float, Ty::Int, Ty::String, Ty::Temporal];
/// `toInteger`: a list passes the compile-time check in Neo4j and fails at run time.
const INTEGER_LIKE: &[Ty] = &[Ty::Bool, Ty::Float, Ty::Int, Ty::String, Ty::List];
const FLOAT_LIKE: &[Ty] = &[Ty::Float, Ty::Int, Ty::String];
const BOOLEAN_LIKE: &[Ty] = &[Ty::Bool, Ty::Int, Ty::String];

/// A [`Signature`]: name as Neo4j spells it, category, description, arity, argument types
/// and result type.
const fn f(
    name: &'static str,
    category: &'static str,
    description: &'static str,
    (min_args, max_args): (usize, usize),
    args: &'static [&'static [Ty]],
    returns: Ty,
) -> Signature {
    Signature {
        info: FunctionInfo {
            name,
            category,
            description,
        },
        min_args,
        max_args,
        args,
        returns,
    }
}

const SIGNATURES: &[Signature] = &[
    f(
        "abs",
        "Numeric",
        "Returns the absolute value of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Any,
    ),
    f(
        "ceil",
        "Numeric",
        "Returns the smallest floating point number that is greater than or equal to a number and equal to an integer.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "floor",
        "Numeric",
        "Returns the largest floating point number that is less than or equal to a number and equal to an integer.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "round",
        "Numeric",
        "Returns the value of a number rounded to the nearest integer, optionally with a precision and rounding mode.",
        (1, 3),
        &[NUMBER, NUMBER, STRING],
        Ty::Float,
    ),
    f(
        "sign",
        "Numeric",
        "Returns the signum of a number: 0 for 0, -1 for a negative number, 1 for a positive one.",
        (1, 1),
        &[NUMBER],
        Ty::Int,
    ),
    f(
        "rand",
        "Numeric",
        "Returns a random floating point number in the range from 0 (inclusive) to 1 (exclusive).",
        (0, 0),
        &[],
        Ty::Float,
    ),
    f(
        "sqrt",
        "Logarithmic",
        "Returns the square root of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "exp",
        "Logarithmic",
        "Returns e raised to the power of the given number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "log",
        "Logarithmic",
        "Returns the natural logarithm of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "log10",
        "Logarithmic",
        "Returns the common logarithm (base 10) of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "e",
        "Logarithmic",
        "Returns the base of the natural logarithm, e.",
        (0, 0),
        &[],
        Ty::Float,
    ),
    f(
        "pi",
        "Trigonometric",
        "Returns the mathematical constant pi.",
        (0, 0),
        &[],
        Ty::Float,
    ),
    f(
        "sin",
        "Trigonometric",
        "Returns the sine of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "cos",
        "Trigonometric",
        "Returns the cosine of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "tan",
        "Trigonometric",
        "Returns the tangent of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "cot",
        "Trigonometric",
        "Returns the cotangent of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "asin",
        "Trigonometric",
        "Returns the arcsine of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "acos",
        "Trigonometric",
        "Returns the arccosine of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "atan",
        "Trigonometric",
        "Returns the arctangent of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "atan2",
        "Trigonometric",
        "Returns the arctangent2 of a set of coordinates in radians.",
        (2, 2),
        &[NUMBER, NUMBER],
        Ty::Float,
    ),
    f(
        "degrees",
        "Trigonometric",
        "Converts radians to degrees.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "radians",
        "Trigonometric",
        "Converts degrees to radians.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "haversin",
        "Trigonometric",
        "Returns half the versine of a number.",
        (1, 1),
        &[NUMBER],
        Ty::Float,
    ),
    f(
        "toInteger",
        "Scalar",
        "Converts a boolean, integer, float or string value to an integer.",
        (1, 1),
        &[INTEGER_LIKE],
        Ty::Int,
    ),
    f(
        "toFloat",
        "Scalar",
        "Converts an integer, float or string value to a float.",
        (1, 1),
        &[FLOAT_LIKE],
        Ty::Float,
    ),
    f(
        "toString",
        "String",
        "Converts an integer, float, boolean, string, temporal or duration value to a string.",
        (1, 1),
        &[STRINGABLE],
        Ty::String,
    ),
    f(
        "toBoolean",
        "Scalar",
        "Converts a string, integer or boolean value to a boolean.",
        (1, 1),
        &[BOOLEAN_LIKE],
        Ty::Bool,
    ),
    f(
        "toIntegerOrNull",
        "Scalar",
        "Converts a value to an integer, or null if it cannot be converted.",
        (1, 1),
        &[ANY],
        Ty::Int,
    ),
    f(
        "toFloatOrNull",
        "Scalar",
        "Converts a value to a float, or null if it cannot be converted.",
        (1, 1),
        &[ANY],
        Ty::Float,
    ),
    f(
        "toStringOrNull",
        "String",
        "Converts a value to a string, or null if it cannot be converted.",
        (1, 1),
        &[ANY],
        Ty::String,
    ),
    f(
        "toBooleanOrNull",
        "Scalar",
        "Converts a value to a boolean, or null if it cannot be converted.",
        (1, 1),
        &[ANY],
        Ty::Bool,
    ),
    f(
        "size",
        "Scalar",
        "Returns the number of items in a list or characters in a string.",
        (1, 1),
        &[STRING_OR_LIST],
        Ty::Int,
    ),
    f(
        "length",
        "Scalar",
        "Returns the length of a path.",
        (1, 1),
        &[PATH],
        Ty::Int,
    ),
    f(
        "head",
        "Scalar",
        "Returns the first element in a list.",
        (1, 1),
        &[LIST],
        Ty::Any,
    ),
    f(
        "last",
        "Scalar",
        "Returns the last element in a list.",
        (1, 1),
        &[LIST],
        Ty::Any,
    ),
    f(
        "tail",
        "List",
        "Returns all but the first element in a list.",
        (1, 1),
        &[LIST],
        Ty::List,
    ),
    // Integers in Neo4j, but the TCK expects any other bound to fail at run time (an
    // `ArgumentError`), so nothing is checked here.
    f(
        "range",
        "List",
        "Returns a list comprising all integer values within a specified range, optionally with a step.",
        (2, 3),
        &[],
        Ty::List,
    ),
    f(
        "reverse",
        "String",
        "Returns a string or list whose order of characters or elements is reversed.",
        (1, 1),
        &[STRING_OR_LIST],
        Ty::Any,
    ),
    f(
        "keys",
        "List",
        "Returns a list containing the string representations of all the property names of a node, relationship or map.",
        (1, 1),
        &[MAP_OR_ENTITY],
        Ty::List,
    ),
    f(
        "labels",
        "List",
        "Returns a list containing the string representations of all the labels of a node.",
        (1, 1),
        &[NODE],
        Ty::List,
    ),
    f(
        "type",
        "Scalar",
        "Returns a string representation of the relationship type.",
        (1, 1),
        &[REL],
        Ty::String,
    ),
    f(
        "id",
        "Scalar",
        "Returns the id of a node or relationship (table << 32 | offset).",
        (1, 1),
        &[ENTITY],
        Ty::Int,
    ),
    f(
        "elementId",
        "Scalar",
        "Returns the element id of a node or relationship.",
        (1, 1),
        &[ENTITY],
        Ty::String,
    ),
    f(
        "properties",
        "Scalar",
        "Returns a map containing all the properties of a node, relationship or map.",
        (1, 1),
        &[MAP_OR_ENTITY],
        Ty::Map,
    ),
    f(
        "nodes",
        "List",
        "Returns a list containing all the nodes in a path.",
        (1, 1),
        &[PATH],
        Ty::List,
    ),
    f(
        "relationships",
        "List",
        "Returns a list containing all the relationships in a path.",
        (1, 1),
        &[PATH],
        Ty::List,
    ),
    f(
        "startNode",
        "Scalar",
        "Returns the start node of a relationship.",
        (1, 1),
        &[REL],
        Ty::Node,
    ),
    f(
        "endNode",
        "Scalar",
        "Returns the end node of a relationship.",
        (1, 1),
        &[REL],
        Ty::Node,
    ),
    f(
        "coalesce",
        "Scalar",
        "Returns the first non-null value in a list of expressions.",
        (1, usize::MAX),
        &[],
        Ty::Any,
    ),
    f(
        "left",
        "String",
        "Returns a string containing the given number of leftmost characters of a string.",
        (2, 2),
        &[STRING, INTEGER],
        Ty::String,
    ),
    f(
        "right",
        "String",
        "Returns a string containing the given number of rightmost characters of a string.",
        (2, 2),
        &[STRING, INTEGER],
        Ty::String,
    ),
    f(
        "substring",
        "String",
        "Returns a substring of a string, from a 0-based start, optionally of a given length.",
        (2, 3),
        &[STRING, INTEGER, INTEGER],
        Ty::String,
    ),
    f(
        "toUpper",
        "String",
        "Returns the given string in uppercase.",
        (1, 1),
        &[STRING],
        Ty::String,
    ),
    f(
        "toLower",
        "String",
        "Returns the given string in lowercase.",
        (1, 1),
        &[STRING],
        Ty::String,
    ),
    f(
        "trim",
        "String",
        "Returns the given string with leading and trailing whitespace removed.",
        (1, 1),
        &[STRING],
        Ty::String,
    ),
    f(
        "ltrim",
        "String",
        "Returns the given string with leading whitespace removed.",
        (1, 1),
        &[STRING],
        Ty::String,
    ),
    f(
        "rtrim",
        "String",
        "Returns the given string with trailing whitespace removed.",
        (1, 1),
        &[STRING],
        Ty::String,
    ),
    f(
        "replace",
        "String",
        "Returns a string in which all occurrences of a specified search string are replaced by another.",
        (3, 3),
        &[STRING, STRING, STRING],
        Ty::String,
    ),
    f(
        "split",
        "String",
        "Returns a list of strings resulting from splitting a string around the given delimiter.",
        (2, 2),
        &[STRING, STRING_OR_LIST],
        Ty::List,
    ),
    f(
        "timestamp",
        "Scalar",
        "Returns the milliseconds since midnight, January 1, 1970 UTC, of the statement's start.",
        (0, 0),
        &[],
        Ty::Int,
    ),
    f(
        "isEmpty",
        "Predicate",
        "Checks whether a string, list or map is empty.",
        (1, 1),
        &[CONTAINER],
        Ty::Bool,
    ),
];

/// The signature of a non-temporal scalar function (`name` in any case).
pub fn signature(name: &str) -> Option<&'static Signature> {
    SIGNATURES
        .iter()
        .find(|s| s.info.name.eq_ignore_ascii_case(name))
}

/// The (min, max) arity of a scalar function, or None if there is no such function.
pub fn arity(lower: &str) -> Option<(usize, usize)> {
    signature(lower)
        .map(|s| (s.min_args, s.max_args))
        .or_else(|| temporal_fns::arity(lower))
}

/// The non-temporal scalar function names the binder accepts (as Neo4j spells them).
pub fn function_names() -> impl Iterator<Item = &'static str> {
    SIGNATURES.iter().map(|s| s.info.name)
}

/// Every function a query may call — scalar, aggregating, predicate and temporal — as `SHOW
/// FUNCTIONS` lists them, sorted by name.
pub fn functions() -> Vec<FunctionInfo> {
    let mut all: Vec<FunctionInfo> = (SIGNATURES.iter().map(|s| s.info))
        .chain(OTHER_FUNCTIONS.iter().copied())
        .collect();
    all.sort_by_key(|f| f.name.to_ascii_lowercase());
    all
}

/// A function as `SHOW FUNCTIONS` lists it: its name as written in Neo4j (matched
/// case-insensitively), its category and what it does.
#[derive(Debug, Clone, Copy)]
pub struct FunctionInfo {
    pub name: &'static str,
    pub category: &'static str,
    pub description: &'static str,
}

/// The functions that are not scalar ones of [`SIGNATURES`] — aggregating, predicate and
/// temporal — as `SHOW FUNCTIONS` lists them (sorted by name). `tests` checks both lists
/// against what the binder accepts.
const OTHER_FUNCTIONS: &[FunctionInfo] = &[
    FunctionInfo {
        name: "all",
        category: "Predicate",
        description: "Returns true if the predicate holds for all elements in the given list.",
    },
    FunctionInfo {
        name: "any",
        category: "Predicate",
        description: "Returns true if the predicate holds for at least one element in the given list.",
    },
    FunctionInfo {
        name: "avg",
        category: "Aggregating",
        description: "Returns the average of a set of numeric or duration values.",
    },
    FunctionInfo {
        name: "collect",
        category: "Aggregating",
        description: "Returns a list containing the values returned by an expression.",
    },
    FunctionInfo {
        name: "count",
        category: "Aggregating",
        description: "Returns the number of values or rows.",
    },
    FunctionInfo {
        name: "date",
        category: "Temporal",
        description: "Creates a date from a string, a map or another temporal value, or the current date.",
    },
    FunctionInfo {
        name: "date.realtime",
        category: "Temporal",
        description: "Returns the current date, read from the real-time clock.",
    },
    FunctionInfo {
        name: "date.statement",
        category: "Temporal",
        description: "Returns the date at the start of the statement.",
    },
    FunctionInfo {
        name: "date.transaction",
        category: "Temporal",
        description: "Returns the date at the start of the statement (Plexus: as date.statement).",
    },
    FunctionInfo {
        name: "date.truncate",
        category: "Temporal",
        description: "Truncates a temporal value to a date at the given unit.",
    },
    FunctionInfo {
        name: "datetime",
        category: "Temporal",
        description: "Creates a zoned datetime from a string, a map or another temporal value, or the current one.",
    },
    FunctionInfo {
        name: "datetime.fromEpoch",
        category: "Temporal",
        description: "Creates a datetime from seconds and nanoseconds since the epoch.",
    },
    FunctionInfo {
        name: "datetime.fromEpochMillis",
        category: "Temporal",
        description: "Creates a datetime from milliseconds since the epoch.",
    },
    FunctionInfo {
        name: "datetime.realtime",
        category: "Temporal",
        description: "Returns the current datetime, read from the real-time clock.",
    },
    FunctionInfo {
        name: "datetime.statement",
        category: "Temporal",
        description: "Returns the datetime at the start of the statement.",
    },
    FunctionInfo {
        name: "datetime.transaction",
        category: "Temporal",
        description: "Returns the datetime at the start of the statement (Plexus: as datetime.statement).",
    },
    FunctionInfo {
        name: "datetime.truncate",
        category: "Temporal",
        description: "Truncates a temporal value to a datetime at the given unit.",
    },
    FunctionInfo {
        name: "duration",
        category: "Duration",
        description: "Creates a duration from a string or a map of components.",
    },
    FunctionInfo {
        name: "duration.between",
        category: "Duration",
        description: "Returns the duration between two temporal values.",
    },
    FunctionInfo {
        name: "duration.inDays",
        category: "Duration",
        description: "Returns the duration between two temporal values in days.",
    },
    FunctionInfo {
        name: "duration.inMonths",
        category: "Duration",
        description: "Returns the duration between two temporal values in months.",
    },
    FunctionInfo {
        name: "duration.inSeconds",
        category: "Duration",
        description: "Returns the duration between two temporal values in seconds.",
    },
    FunctionInfo {
        name: "exists",
        category: "Predicate",
        description: "Returns true if a match for the pattern exists in the graph.",
    },
    FunctionInfo {
        name: "localdatetime",
        category: "Temporal",
        description: "Creates a local datetime from a string, a map or another temporal value, or the current one.",
    },
    FunctionInfo {
        name: "localdatetime.realtime",
        category: "Temporal",
        description: "Returns the current local datetime, read from the real-time clock.",
    },
    FunctionInfo {
        name: "localdatetime.statement",
        category: "Temporal",
        description: "Returns the local datetime at the start of the statement.",
    },
    FunctionInfo {
        name: "localdatetime.transaction",
        category: "Temporal",
        description: "Returns the local datetime at the start of the statement (Plexus: as localdatetime.statement).",
    },
    FunctionInfo {
        name: "localdatetime.truncate",
        category: "Temporal",
        description: "Truncates a temporal value to a local datetime at the given unit.",
    },
    FunctionInfo {
        name: "localtime",
        category: "Temporal",
        description: "Creates a local time from a string, a map or another temporal value, or the current one.",
    },
    FunctionInfo {
        name: "localtime.realtime",
        category: "Temporal",
        description: "Returns the current local time, read from the real-time clock.",
    },
    FunctionInfo {
        name: "localtime.statement",
        category: "Temporal",
        description: "Returns the local time at the start of the statement.",
    },
    FunctionInfo {
        name: "localtime.transaction",
        category: "Temporal",
        description: "Returns the local time at the start of the statement (Plexus: as localtime.statement).",
    },
    FunctionInfo {
        name: "localtime.truncate",
        category: "Temporal",
        description: "Truncates a temporal value to a local time at the given unit.",
    },
    FunctionInfo {
        name: "max",
        category: "Aggregating",
        description: "Returns the maximum value in a set of values.",
    },
    FunctionInfo {
        name: "min",
        category: "Aggregating",
        description: "Returns the minimum value in a set of values.",
    },
    FunctionInfo {
        name: "none",
        category: "Predicate",
        description: "Returns true if the predicate holds for no element in the given list.",
    },
    FunctionInfo {
        name: "percentileCont",
        category: "Aggregating",
        description: "Returns the percentile of a value over a group using linear interpolation.",
    },
    FunctionInfo {
        name: "percentileDisc",
        category: "Aggregating",
        description: "Returns the nearest value to the given percentile over a group using a rounding method.",
    },
    FunctionInfo {
        name: "single",
        category: "Predicate",
        description: "Returns true if the predicate holds for exactly one of the elements in the given list.",
    },
    FunctionInfo {
        name: "stDev",
        category: "Aggregating",
        description: "Returns the standard deviation for the given value over a group for a sample of a population.",
    },
    FunctionInfo {
        name: "stDevP",
        category: "Aggregating",
        description: "Returns the standard deviation for the given value over a group for an entire population.",
    },
    FunctionInfo {
        name: "sum",
        category: "Aggregating",
        description: "Returns the sum of a set of numeric or duration values.",
    },
    FunctionInfo {
        name: "time",
        category: "Temporal",
        description: "Creates a zoned time from a string, a map or another temporal value, or the current one.",
    },
    FunctionInfo {
        name: "time.realtime",
        category: "Temporal",
        description: "Returns the current time, read from the real-time clock.",
    },
    FunctionInfo {
        name: "time.statement",
        category: "Temporal",
        description: "Returns the time at the start of the statement.",
    },
    FunctionInfo {
        name: "time.transaction",
        category: "Temporal",
        description: "Returns the time at the start of the statement (Plexus: as time.statement).",
    },
    FunctionInfo {
        name: "time.truncate",
        category: "Temporal",
        description: "Truncates a temporal value to a time at the given unit.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logical::AggFunction;

    /// What the binder accepts under `lower` besides scalar functions: aggregates, the list
    /// predicates and `exists` (parsed as expressions of their own).
    fn accepted(lower: &str) -> bool {
        arity(lower).is_some()
            || AggFunction::from_name(lower).is_some()
            || ["all", "any", "none", "single", "exists"].contains(&lower)
    }

    #[test]
    fn signatures_type_only_arguments_their_functions_take() {
        for s in SIGNATURES {
            let name = s.info.name;
            assert!(s.min_args <= s.max_args, "{name}");
            assert!(s.args.len() <= s.max_args, "{name} types unused arguments");
        }
    }

    #[test]
    fn show_functions_lists_exactly_what_queries_may_call() {
        let all = functions();
        for info in &all {
            let lower = info.name.to_ascii_lowercase();
            assert!(accepted(&lower), "{} is listed but not accepted", info.name);
            let listed = (all.iter())
                .filter(|f| f.name.eq_ignore_ascii_case(info.name))
                .count();
            assert_eq!(listed, 1, "{} is listed {listed} times", info.name);
        }
        for info in OTHER_FUNCTIONS {
            assert!(signature(info.name).is_none(), "{} is scalar", info.name);
        }
        let names: Vec<&str> = OTHER_FUNCTIONS.iter().map(|f| f.name).collect();
        let mut sorted = names.clone();
        sorted.sort_by_key(|n| n.to_ascii_lowercase());
        assert_eq!(names, sorted, "OTHER_FUNCTIONS is sorted by name");
    }
}
