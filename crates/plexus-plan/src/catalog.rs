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

/// One scalar function: its arity and types.
#[derive(Debug)]
pub struct Signature {
    /// Lower case.
    pub name: &'static str,
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

const fn f(
    name: &'static str,
    min_args: usize,
    max_args: usize,
    args: &'static [&'static [Ty]],
    returns: Ty,
) -> Signature {
    Signature {
        name,
        min_args,
        max_args,
        args,
        returns,
    }
}

const SIGNATURES: &[Signature] = &[
    f("abs", 1, 1, &[NUMBER], Ty::Any),
    f("ceil", 1, 1, &[NUMBER], Ty::Float),
    f("floor", 1, 1, &[NUMBER], Ty::Float),
    f("round", 1, 3, &[NUMBER, NUMBER, STRING], Ty::Float),
    f("sign", 1, 1, &[NUMBER], Ty::Int),
    f("rand", 0, 0, &[], Ty::Float),
    f("sqrt", 1, 1, &[NUMBER], Ty::Float),
    f("exp", 1, 1, &[NUMBER], Ty::Float),
    f("log", 1, 1, &[NUMBER], Ty::Float),
    f("log10", 1, 1, &[NUMBER], Ty::Float),
    f("e", 0, 0, &[], Ty::Float),
    f("pi", 0, 0, &[], Ty::Float),
    f("sin", 1, 1, &[NUMBER], Ty::Float),
    f("cos", 1, 1, &[NUMBER], Ty::Float),
    f("tan", 1, 1, &[NUMBER], Ty::Float),
    f("cot", 1, 1, &[NUMBER], Ty::Float),
    f("asin", 1, 1, &[NUMBER], Ty::Float),
    f("acos", 1, 1, &[NUMBER], Ty::Float),
    f("atan", 1, 1, &[NUMBER], Ty::Float),
    f("atan2", 2, 2, &[NUMBER, NUMBER], Ty::Float),
    f("degrees", 1, 1, &[NUMBER], Ty::Float),
    f("radians", 1, 1, &[NUMBER], Ty::Float),
    f("haversin", 1, 1, &[NUMBER], Ty::Float),
    f("tointeger", 1, 1, &[INTEGER_LIKE], Ty::Int),
    f("tofloat", 1, 1, &[FLOAT_LIKE], Ty::Float),
    f("tostring", 1, 1, &[STRINGABLE], Ty::String),
    f("toboolean", 1, 1, &[BOOLEAN_LIKE], Ty::Bool),
    f("tointegerornull", 1, 1, &[ANY], Ty::Int),
    f("tofloatornull", 1, 1, &[ANY], Ty::Float),
    f("tostringornull", 1, 1, &[ANY], Ty::String),
    f("tobooleanornull", 1, 1, &[ANY], Ty::Bool),
    f("size", 1, 1, &[STRING_OR_LIST], Ty::Int),
    f("length", 1, 1, &[PATH], Ty::Int),
    f("head", 1, 1, &[LIST], Ty::Any),
    f("last", 1, 1, &[LIST], Ty::Any),
    f("tail", 1, 1, &[LIST], Ty::List),
    // Integers in Neo4j, but the TCK expects any other bound to fail at run time (an
    // `ArgumentError`), so nothing is checked here.
    f("range", 2, 3, &[], Ty::List),
    f("reverse", 1, 1, &[STRING_OR_LIST], Ty::Any),
    f("keys", 1, 1, &[MAP_OR_ENTITY], Ty::List),
    f("labels", 1, 1, &[NODE], Ty::List),
    f("type", 1, 1, &[REL], Ty::String),
    f("id", 1, 1, &[ENTITY], Ty::Int),
    f("elementid", 1, 1, &[ENTITY], Ty::String),
    f("properties", 1, 1, &[MAP_OR_ENTITY], Ty::Map),
    f("nodes", 1, 1, &[PATH], Ty::List),
    f("relationships", 1, 1, &[PATH], Ty::List),
    f("startnode", 1, 1, &[REL], Ty::Node),
    f("endnode", 1, 1, &[REL], Ty::Node),
    f("coalesce", 1, usize::MAX, &[], Ty::Any),
    f("left", 2, 2, &[STRING, INTEGER], Ty::String),
    f("right", 2, 2, &[STRING, INTEGER], Ty::String),
    f("substring", 2, 3, &[STRING, INTEGER, INTEGER], Ty::String),
    f("toupper", 1, 1, &[STRING], Ty::String),
    f("tolower", 1, 1, &[STRING], Ty::String),
    f("trim", 1, 1, &[STRING], Ty::String),
    f("ltrim", 1, 1, &[STRING], Ty::String),
    f("rtrim", 1, 1, &[STRING], Ty::String),
    f("replace", 3, 3, &[STRING, STRING, STRING], Ty::String),
    f("split", 2, 2, &[STRING, STRING_OR_LIST], Ty::List),
    f("timestamp", 0, 0, &[], Ty::Int),
    f("isempty", 1, 1, &[CONTAINER], Ty::Bool),
];

/// The signature of a non-temporal scalar function.
pub fn signature(lower: &str) -> Option<&'static Signature> {
    SIGNATURES.iter().find(|s| s.name == lower)
}

/// The (min, max) arity of a scalar function, or None if there is no such function.
pub fn arity(lower: &str) -> Option<(usize, usize)> {
    signature(lower)
        .map(|s| (s.min_args, s.max_args))
        .or_else(|| temporal_fns::arity(lower))
}

/// The non-temporal scalar function names the binder accepts.
pub fn function_names() -> impl Iterator<Item = &'static str> {
    SIGNATURES.iter().map(|s| s.name)
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
    fn signatures_type_only_arguments_their_functions_take() {
        for s in SIGNATURES {
            assert!(s.min_args <= s.max_args, "{}", s.name);
            assert!(
                s.args.len() <= s.max_args,
                "{} types unused arguments",
                s.name
            );
            let listed = SIGNATURES.iter().filter(|t| t.name == s.name).count();
            assert_eq!(listed, 1, "{} is listed {listed} times", s.name);
        }
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
