//! The scalar functions the binder knows: names (lower-case) and arities. Their
//! implementations are the executor's (`plexus_exec::eval::functions`); a name the binder
//! accepts that the executor does not implement fails there as an unknown function, so the
//! executor's tests call every name listed here ([`function_names`]). Temporal functions
//! (`date`, `duration.between`, ...) are `plexus_value::temporal_fns`'s, names and code.

use plexus_value::temporal_fns;

/// (name, minimum arguments, maximum arguments)
const SIGNATURES: &[(&str, usize, usize)] = &[
    ("abs", 1, 1),
    ("ceil", 1, 1),
    ("floor", 1, 1),
    ("round", 1, 3),
    ("sign", 1, 1),
    ("rand", 0, 0),
    ("sqrt", 1, 1),
    ("exp", 1, 1),
    ("log", 1, 1),
    ("log10", 1, 1),
    ("e", 0, 0),
    ("pi", 0, 0),
    ("sin", 1, 1),
    ("cos", 1, 1),
    ("tan", 1, 1),
    ("cot", 1, 1),
    ("asin", 1, 1),
    ("acos", 1, 1),
    ("atan", 1, 1),
    ("atan2", 2, 2),
    ("degrees", 1, 1),
    ("radians", 1, 1),
    ("haversin", 1, 1),
    ("tointeger", 1, 1),
    ("tofloat", 1, 1),
    ("tostring", 1, 1),
    ("toboolean", 1, 1),
    ("tointegerornull", 1, 1),
    ("tofloatornull", 1, 1),
    ("tostringornull", 1, 1),
    ("tobooleanornull", 1, 1),
    ("size", 1, 1),
    ("length", 1, 1),
    ("head", 1, 1),
    ("last", 1, 1),
    ("tail", 1, 1),
    ("range", 2, 3),
    ("reverse", 1, 1),
    ("keys", 1, 1),
    ("labels", 1, 1),
    ("type", 1, 1),
    ("id", 1, 1),
    ("elementid", 1, 1),
    ("properties", 1, 1),
    ("nodes", 1, 1),
    ("relationships", 1, 1),
    ("startnode", 1, 1),
    ("endnode", 1, 1),
    ("coalesce", 1, usize::MAX),
    ("left", 2, 2),
    ("right", 2, 2),
    ("substring", 2, 3),
    ("toupper", 1, 1),
    ("tolower", 1, 1),
    ("trim", 1, 1),
    ("ltrim", 1, 1),
    ("rtrim", 1, 1),
    ("replace", 3, 3),
    ("split", 2, 2),
    ("timestamp", 0, 0),
    ("isempty", 1, 1),
];

/// The (min, max) arity of a scalar function, or None if there is no such function.
pub fn arity(lower: &str) -> Option<(usize, usize)> {
    SIGNATURES
        .iter()
        .find(|(name, _, _)| *name == lower)
        .map(|(_, min, max)| (*min, *max))
        .or_else(|| temporal_fns::arity(lower))
}

/// The non-temporal scalar function names the binder accepts.
pub fn function_names() -> impl Iterator<Item = &'static str> {
    SIGNATURES.iter().map(|(name, _, _)| *name)
}

/// A function as `SHOW FUNCTIONS` lists it: its name as written in Neo4j (matched
/// case-insensitively), its category and what it does.
#[derive(Debug, Clone, Copy)]
pub struct FunctionInfo {
    pub name: &'static str,
    pub category: &'static str,
    pub description: &'static str,
}

/// Every function a query may call — scalar, aggregating, predicate and temporal — by name.
/// `tests` checks the list against what the binder accepts.
pub const FUNCTIONS: &[FunctionInfo] = &[
    FunctionInfo {
        name: "abs",
        category: "Numeric",
        description: "Returns the absolute value of a number.",
    },
    FunctionInfo {
        name: "acos",
        category: "Trigonometric",
        description: "Returns the arccosine of a number.",
    },
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
        name: "asin",
        category: "Trigonometric",
        description: "Returns the arcsine of a number.",
    },
    FunctionInfo {
        name: "atan",
        category: "Trigonometric",
        description: "Returns the arctangent of a number.",
    },
    FunctionInfo {
        name: "atan2",
        category: "Trigonometric",
        description: "Returns the arctangent2 of a set of coordinates in radians.",
    },
    FunctionInfo {
        name: "avg",
        category: "Aggregating",
        description: "Returns the average of a set of numeric or duration values.",
    },
    FunctionInfo {
        name: "ceil",
        category: "Numeric",
        description: "Returns the smallest floating point number that is greater than or equal to a number and equal to an integer.",
    },
    FunctionInfo {
        name: "coalesce",
        category: "Scalar",
        description: "Returns the first non-null value in a list of expressions.",
    },
    FunctionInfo {
        name: "collect",
        category: "Aggregating",
        description: "Returns a list containing the values returned by an expression.",
    },
    FunctionInfo {
        name: "cos",
        category: "Trigonometric",
        description: "Returns the cosine of a number.",
    },
    FunctionInfo {
        name: "cot",
        category: "Trigonometric",
        description: "Returns the cotangent of a number.",
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
        name: "degrees",
        category: "Trigonometric",
        description: "Converts radians to degrees.",
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
        name: "e",
        category: "Logarithmic",
        description: "Returns the base of the natural logarithm, e.",
    },
    FunctionInfo {
        name: "elementId",
        category: "Scalar",
        description: "Returns the element id of a node or relationship.",
    },
    FunctionInfo {
        name: "endNode",
        category: "Scalar",
        description: "Returns the end node of a relationship.",
    },
    FunctionInfo {
        name: "exists",
        category: "Predicate",
        description: "Returns true if a match for the pattern exists in the graph.",
    },
    FunctionInfo {
        name: "exp",
        category: "Logarithmic",
        description: "Returns e raised to the power of the given number.",
    },
    FunctionInfo {
        name: "floor",
        category: "Numeric",
        description: "Returns the largest floating point number that is less than or equal to a number and equal to an integer.",
    },
    FunctionInfo {
        name: "haversin",
        category: "Trigonometric",
        description: "Returns half the versine of a number.",
    },
    FunctionInfo {
        name: "head",
        category: "Scalar",
        description: "Returns the first element in a list.",
    },
    FunctionInfo {
        name: "id",
        category: "Scalar",
        description: "Returns the id of a node or relationship (table << 32 | offset).",
    },
    FunctionInfo {
        name: "isEmpty",
        category: "Predicate",
        description: "Checks whether a string, list or map is empty.",
    },
    FunctionInfo {
        name: "keys",
        category: "List",
        description: "Returns a list containing the string representations of all the property names of a node, relationship or map.",
    },
    FunctionInfo {
        name: "labels",
        category: "List",
        description: "Returns a list containing the string representations of all the labels of a node.",
    },
    FunctionInfo {
        name: "last",
        category: "Scalar",
        description: "Returns the last element in a list.",
    },
    FunctionInfo {
        name: "left",
        category: "String",
        description: "Returns a string containing the given number of leftmost characters of a string.",
    },
    FunctionInfo {
        name: "length",
        category: "Scalar",
        description: "Returns the length of a path.",
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
        name: "log",
        category: "Logarithmic",
        description: "Returns the natural logarithm of a number.",
    },
    FunctionInfo {
        name: "log10",
        category: "Logarithmic",
        description: "Returns the common logarithm (base 10) of a number.",
    },
    FunctionInfo {
        name: "ltrim",
        category: "String",
        description: "Returns the given string with leading whitespace removed.",
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
        name: "nodes",
        category: "List",
        description: "Returns a list containing all the nodes in a path.",
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
        name: "pi",
        category: "Trigonometric",
        description: "Returns the mathematical constant pi.",
    },
    FunctionInfo {
        name: "properties",
        category: "Scalar",
        description: "Returns a map containing all the properties of a node, relationship or map.",
    },
    FunctionInfo {
        name: "radians",
        category: "Trigonometric",
        description: "Converts degrees to radians.",
    },
    FunctionInfo {
        name: "rand",
        category: "Numeric",
        description: "Returns a random floating point number in the range from 0 (inclusive) to 1 (exclusive).",
    },
    FunctionInfo {
        name: "range",
        category: "List",
        description: "Returns a list comprising all integer values within a specified range, optionally with a step.",
    },
    FunctionInfo {
        name: "relationships",
        category: "List",
        description: "Returns a list containing all the relationships in a path.",
    },
    FunctionInfo {
        name: "replace",
        category: "String",
        description: "Returns a string in which all occurrences of a specified search string are replaced by another.",
    },
    FunctionInfo {
        name: "reverse",
        category: "String",
        description: "Returns a string or list whose order of characters or elements is reversed.",
    },
    FunctionInfo {
        name: "right",
        category: "String",
        description: "Returns a string containing the given number of rightmost characters of a string.",
    },
    FunctionInfo {
        name: "round",
        category: "Numeric",
        description: "Returns the value of a number rounded to the nearest integer, optionally with a precision and rounding mode.",
    },
    FunctionInfo {
        name: "rtrim",
        category: "String",
        description: "Returns the given string with trailing whitespace removed.",
    },
    FunctionInfo {
        name: "sign",
        category: "Numeric",
        description: "Returns the signum of a number: 0 for 0, -1 for a negative number, 1 for a positive one.",
    },
    FunctionInfo {
        name: "sin",
        category: "Trigonometric",
        description: "Returns the sine of a number.",
    },
    FunctionInfo {
        name: "single",
        category: "Predicate",
        description: "Returns true if the predicate holds for exactly one of the elements in the given list.",
    },
    FunctionInfo {
        name: "size",
        category: "Scalar",
        description: "Returns the number of items in a list or characters in a string.",
    },
    FunctionInfo {
        name: "split",
        category: "String",
        description: "Returns a list of strings resulting from splitting a string around the given delimiter.",
    },
    FunctionInfo {
        name: "sqrt",
        category: "Logarithmic",
        description: "Returns the square root of a number.",
    },
    FunctionInfo {
        name: "startNode",
        category: "Scalar",
        description: "Returns the start node of a relationship.",
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
        name: "substring",
        category: "String",
        description: "Returns a substring of a string, from a 0-based start, optionally of a given length.",
    },
    FunctionInfo {
        name: "sum",
        category: "Aggregating",
        description: "Returns the sum of a set of numeric or duration values.",
    },
    FunctionInfo {
        name: "tail",
        category: "List",
        description: "Returns all but the first element in a list.",
    },
    FunctionInfo {
        name: "tan",
        category: "Trigonometric",
        description: "Returns the tangent of a number.",
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
    FunctionInfo {
        name: "timestamp",
        category: "Scalar",
        description: "Returns the milliseconds since midnight, January 1, 1970 UTC, of the statement's start.",
    },
    FunctionInfo {
        name: "toBoolean",
        category: "Scalar",
        description: "Converts a string, integer or boolean value to a boolean.",
    },
    FunctionInfo {
        name: "toBooleanOrNull",
        category: "Scalar",
        description: "Converts a value to a boolean, or null if it cannot be converted.",
    },
    FunctionInfo {
        name: "toFloat",
        category: "Scalar",
        description: "Converts an integer, float or string value to a float.",
    },
    FunctionInfo {
        name: "toFloatOrNull",
        category: "Scalar",
        description: "Converts a value to a float, or null if it cannot be converted.",
    },
    FunctionInfo {
        name: "toInteger",
        category: "Scalar",
        description: "Converts a boolean, integer, float or string value to an integer.",
    },
    FunctionInfo {
        name: "toIntegerOrNull",
        category: "Scalar",
        description: "Converts a value to an integer, or null if it cannot be converted.",
    },
    FunctionInfo {
        name: "toLower",
        category: "String",
        description: "Returns the given string in lowercase.",
    },
    FunctionInfo {
        name: "toString",
        category: "String",
        description: "Converts an integer, float, boolean, string, temporal or duration value to a string.",
    },
    FunctionInfo {
        name: "toStringOrNull",
        category: "String",
        description: "Converts a value to a string, or null if it cannot be converted.",
    },
    FunctionInfo {
        name: "toUpper",
        category: "String",
        description: "Returns the given string in uppercase.",
    },
    FunctionInfo {
        name: "trim",
        category: "String",
        description: "Returns the given string with leading and trailing whitespace removed.",
    },
    FunctionInfo {
        name: "type",
        category: "Scalar",
        description: "Returns a string representation of the relationship type.",
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
    fn show_functions_lists_exactly_what_queries_may_call() {
        for info in FUNCTIONS {
            let lower = info.name.to_ascii_lowercase();
            assert!(accepted(&lower), "{} is listed but not accepted", info.name);
        }
        let listed = |name: &str| FUNCTIONS.iter().any(|f| f.name.eq_ignore_ascii_case(name));
        for name in function_names() {
            assert!(listed(name), "{name} is accepted but not listed");
        }
        let names: Vec<&str> = FUNCTIONS.iter().map(|f| f.name).collect();
        let mut sorted = names.clone();
        sorted.sort_by_key(|n| n.to_ascii_lowercase());
        assert_eq!(names, sorted, "FUNCTIONS is sorted by name");
    }
}
