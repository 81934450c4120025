//! Filter predicates, and pipelines of filters and an aggregation, compiled to machine code
//! with Cranelift.
//!
//! WHAT
//! ====
//! A filter predicate (`plexus_plan::logical::BExpr`) over typed column buffers — the Arrow
//! arrays the vectorised interpreter (`plexus_exec::eval::vector`) builds per batch — is
//! compiled to ONE native function holding the whole loop over the batch's rows; so is a
//! chain of filters stacked in one pipeline (`WHERE a AND b AND c` becomes three Filter
//! operators), fused into that one loop:
//!
//! ```text
//! fn(columns: *const ColumnArg, params: *const ParamArg, len: u64,
//!    out_value: *mut u8, out_valid: *mut u8,
//!    out_passed: *mut u64) -> u32                        // 0: mask written; 1: fall back
//! ```
//!
//! Per row it loads each leaf column's value and validity bit once (a property two filters
//! of a chain test is read once), evaluates every predicate in registers (no call into Rust,
//! no boxing, no dispatch) and writes one byte of value and one of validity — for a chain,
//! of the predicates' AND — and counts, per predicate, the rows it and those below it pass
//! (PROFILE's row counts of each fused filter); Rust packs the bytes into a `BooleanArray`
//! once per batch ([`Mask`]). One call per batch, never one per row — the lesson of
//! DataFusion's removed JIT, whose per-row calls into Rust helpers ate the gain.
//!
//! What is compiled (see [`shape`] for the static part, `codegen` for the typed part):
//! - leaves: slot columns and property columns (`n.key`) as INTEGER, FLOAT, BOOLEAN or
//!   STRING buffers with validity bitmaps (a string column as Arrow's `i32` offsets and its
//!   bytes, read in place); literals (null, booleans, integers, floats, strings) as constants;
//!   parameters of those types passed at run time (so a compiled predicate serves every
//!   value of its parameters);
//! - integer `+ - * / %` with overflow and zero-divisor detection, float `+ - * /`, and
//!   integer/float mixes (the integer converted as `as f64`, like the row evaluator); unary
//!   minus (`-i64::MIN` detected as an overflow);
//! - `= <> < <= > >=` between two integers, two floats (IEEE: NaN compares false, `<>` true;
//!   `-0.0 = 0.0`), two booleans (`false < true`), or an integer and a float (exactly, as
//!   the row evaluator orders them: no rounding of the integer);
//! - string `=` / `<>` (byte equality) and `STARTS WITH`, each a byte loop in the generated
//!   code (no call out);
//! - `AND` / `OR` / `XOR` / `NOT` with Cypher's three-valued (Kleene) logic, `IS [NOT] NULL`,
//!   `x IN [constant list]` (at most [`MAX_IN_LIST`] items, exact integer/float equality
//!   decided when compiling), and null (the literal, or a null parameter) anywhere.
//!
//! SAME RESULTS, ALWAYS
//! ====================
//! The row evaluator (`plexus_exec::eval`) is the model; compiled code gives its mask or
//! none at all:
//! - an operator or a type combination not listed above is not compiled ([`Unsupported`]):
//!   the caller runs the interpreter, as without a JIT;
//! - any row on which an operation would raise an error (integer overflow, a zero integer
//!   divisor, `i64::MIN / -1`) makes the function return "fall back" for the whole batch,
//!   whichever side of an AND / OR it is on, so the interpreter raises exactly the error it
//!   raises — or short-circuits past it — as today. Divisors are sanitised before dividing,
//!   so the machine never traps;
//! - leaves and parameters are checked against the types the code was compiled for on every
//!   call ([`CompiledCode::run`] returns `None` on any mismatch).
//!
//! The differential property test in `plexus-exec` (`exec/jit_differential.rs`, where the row
//! evaluator lives) checks this on random expressions over random columns (nulls, NaN, ±0.0,
//! ±inf, the extreme integers); `tests/compiled.rs` here holds hand-written cases.
//!
//! Compiled predicates are cached ([`cache`]) by fingerprint, leaf/parameter types and the
//! catalog's schema version, with a bound on the number of modules; a module's code is freed when the last user of an evicted
//! entry lets go of it.
//!
//! COMPILED PIPELINES
//! ==================
//! A [`Program`] with an [`AggregateProgram`] compiles the chain's predicates (none: every
//! row is fed) and the aggregation its rows feed into one loop (`codegen/aggregate.rs`): per kept row, the
//! grouping key (an INTEGER in `0..DENSE_KEYS` indexes the caller's array of groups; null
//! has a group of its own), each call's argument, and the update of `count`, `sum`/`avg`,
//! `min`, `max` states in the caller's flat per-group arrays
//! ([`CompiledCode::run_aggregate`]). The code stops before any row it cannot finish
//! — a group to create, a key outside the dense range, an error, an overflowing sum —
//! and says where ([`Stop`]); the caller creates the group and calls again, or hands the
//! rest of the batch to the interpreter.
//!
//! COMPILED PROJECTIONS
//! ====================
//! A [`Program::project`] compiles a Project's computed items into one loop that writes each
//! row's value and validity to a typed output column per item — INTEGER, FLOAT or BOOLEAN
//! ([`CompiledCode::run_project`], `codegen/project.rs`); as for a filter, any row on
//! which an item would raise an error makes the whole batch fall back.
//!
//! NOT YET
//! =======
//! String ordering, `ENDS WITH`, `CONTAINS`; scans and expands inside the compiled loop (the
//! code reads the typed columns the interpreter fetches per batch); string or float grouping
//! keys, more than one key, `collect` and DISTINCT aggregates (the typed table or the row path
//! in Rust runs those).

pub mod cache;
mod codegen;
pub mod shape;

pub use cache::{Cache, Lookup, MAX_CACHED_PREDICATES};
pub use codegen::aggregate::{
    AggregateState, CallBuffers, DENSE_KEYS, NO_GROUP, Progress, ReplayRecord, Stop,
};
pub use codegen::project::Computed;
pub use codegen::{CompiledCode, Mask};
pub use shape::{Leaf, MAX_IN_LIST, Shape, Unsupported, shape};

use arrow::array::{BooleanArray, Float64Array, Int64Array, StringArray};
use plexus_value::value::Value;
use std::fmt;
use std::str::FromStr;

/// The `jit` setting: whether filters run compiled code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JitMode {
    /// Always the interpreter.
    Off,
    /// Compile before the first batch, then run compiled code.
    On,
    /// Start interpreted, compile on a background thread, switch when the code is ready.
    #[default]
    Adaptive,
}

impl JitMode {
    pub fn name(self) -> &'static str {
        match self {
            JitMode::Off => "off",
            JitMode::On => "on",
            JitMode::Adaptive => "adaptive",
        }
    }
}

impl fmt::Display for JitMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for JitMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(JitMode::Off),
            "on" => Ok(JitMode::On),
            "adaptive" => Ok(JitMode::Adaptive),
            other => Err(format!("expected off, on or adaptive, not '{other}'")),
        }
    }
}

/// The type of a leaf, parameter or intermediate value in compiled code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    Int,
    Float,
    Bool,
    /// UTF-8 bytes: equality and `STARTS WITH` only.
    Str,
    /// Null on every row (the literal `null`, a null parameter).
    Null,
}

impl ColumnType {
    /// The type of a parameter's value, if compiled code can take it.
    pub fn of(value: &Value) -> Option<ColumnType> {
        match value {
            Value::Int(_) => Some(ColumnType::Int),
            Value::Float(_) => Some(ColumnType::Float),
            Value::Bool(_) => Some(ColumnType::Bool),
            Value::String(_) => Some(ColumnType::Str),
            Value::Null => Some(ColumnType::Null),
            _ => None,
        }
    }
}

/// One leaf column of a batch, as the interpreter typed it.
#[derive(Debug, Clone, Copy)]
pub enum Column<'a> {
    Int(&'a Int64Array),
    Float(&'a Float64Array),
    Bool(&'a BooleanArray),
    Str(&'a StringArray),
}

impl Column<'_> {
    pub fn column_type(&self) -> ColumnType {
        match self {
            Column::Int(_) => ColumnType::Int,
            Column::Float(_) => ColumnType::Float,
            Column::Bool(_) => ColumnType::Bool,
            Column::Str(_) => ColumnType::Str,
        }
    }

    fn len(&self) -> usize {
        use arrow::array::Array;
        match self {
            Column::Int(a) => a.len(),
            Column::Float(a) => a.len(),
            Column::Bool(a) => a.len(),
            Column::Str(a) => a.len(),
        }
    }
}

/// The types compiled code is specialised for: one per leaf of the [`Shape`] and one per
/// parameter, in the shape's order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    pub leaves: Vec<ColumnType>,
    pub params: Vec<ColumnType>,
}

impl Signature {
    /// The signature of a batch's leaf columns and the statement's parameter values; `None`
    /// if a parameter has a type compiled code does not take.
    pub fn of(columns: &[Column], params: &[&Value]) -> Option<Signature> {
        Some(Signature {
            leaves: columns.iter().map(Column::column_type).collect(),
            params: params
                .iter()
                .map(|v| ColumnType::of(v))
                .collect::<Option<_>>()?,
        })
    }
}

/// What one compiled function computes: a Filter's predicate or a fused chain's, bottom
/// first, and — for a pipeline whose Aggregate took the chain's rows (see COMPILED
/// PIPELINES) — the aggregation those rows feed.
#[derive(Debug, Clone, Default)]
pub struct Program {
    pub predicates: Vec<plexus_plan::logical::BExpr>,
    pub aggregate: Option<AggregateProgram>,
    /// A Project's computed items (no predicate, no aggregation): each row's values
    /// written to typed output columns (see COMPILED PROJECTIONS).
    pub project: Vec<plexus_plan::logical::BExpr>,
}

impl Program {
    /// A filter (or a fused chain) alone.
    pub fn filter(predicates: &[plexus_plan::logical::BExpr]) -> Program {
        Program {
            predicates: predicates.to_vec(),
            ..Program::default()
        }
    }

    /// A Project's computed items.
    pub fn project(items: &[plexus_plan::logical::BExpr]) -> Program {
        Program {
            project: items.to_vec(),
            ..Program::default()
        }
    }

    /// Its shape, or why its operators are not all compiled ([`shape`]).
    pub fn shape(&self) -> Result<Shape, Unsupported> {
        shape::program(self)
    }
}

/// The aggregation of a compiled pipeline: at most one grouping key (an INTEGER, or null) and
/// calls without DISTINCT.
#[derive(Debug, Clone)]
pub struct AggregateProgram {
    pub key: Option<plexus_plan::logical::BExpr>,
    /// Each call's operation and argument (`None` for `count(*)`).
    pub calls: Vec<(AggOp, Option<plexus_plan::logical::BExpr>)>,
    /// A parallel worker's partial aggregation: `sum`/`avg` values recorded
    /// ([`ReplayRecord`]) for the caller to add in serial order, not added.
    pub replay: bool,
}

/// An aggregate call compiled code updates in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggOp {
    /// `count(*)`.
    Rows,
    /// `count(x)`.
    Count,
    /// `sum(x)` and `avg(x)`: a count and a sum.
    Sum,
    Min,
    Max,
}

/// Compiles `predicates` — one Filter's, or a fused chain's bottom first — (whose shape is
/// `shape`) for `signature`.
pub fn compile(
    predicates: &[plexus_plan::logical::BExpr],
    shape: &Shape,
    signature: &Signature,
) -> Result<CompiledCode, Unsupported> {
    compile_program(&Program::filter(predicates), shape, signature)
}

/// Compiles `program` (whose shape is `shape`) for `signature`.
pub fn compile_program(
    program: &Program,
    shape: &Shape,
    signature: &Signature,
) -> Result<CompiledCode, Unsupported> {
    codegen::compile(program, shape, signature)
}
