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
