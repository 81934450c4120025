//! The Filter operator's compiled path: when and how a filter runs `plexus_jit` code.
//!
//! WHAT
//! ====
//! A [`OperatorJit`] lives in each Filter stage. Per batch, under the session's `jit` setting
//! (`ExecState::jit`):
//! - `off`: nothing; the vectorised interpreter, else the row evaluator, as before;
//! - `on`: the first batch of each type signature compiles synchronously (or takes the
//!   process-wide cache's code), and every batch runs compiled;
//! - `adaptive` (the default): the first [`ADAPTIVE_MIN_ROWS`] rows a Filter sees are
//!   interpreted without asking for code — a short query (an SNB read: a few hundred rows per
//!   filter) gains nothing from compiled code and would pay the lookup and, cold, a thread
//!   spawn and a compile competing with it for the cores; after them a cache miss starts a
//!   background compile and the batch is interpreted; later batches poll, and run compiled
//!   once the code is ready.
//!
//! The leaves are the vectorised interpreter's own typed columns (`vector::leaf`), the
//! parameters the statement's values; the signature of their types picks the code. Anything
//! the JIT does not take — a predicate with an uncovered operator (decided once, when the
//! stage is built), a string or mixed column, a parameter of another type, a batch on which
//! some row would raise an error — returns `None`, and the caller runs the interpreter on that
//! batch: the answer (rows, errors) is always the interpreter's.
//!
//! [`OperatorJit::take_profile`] tells PROFILE what ran (`JitProfile::text`): `compiled` (every
//! batch), `interpreted`, or `mixed` (adaptive's switch, or batches that fell back), with the
//! compile time of the code; or `no (why)` for a predicate with an operator the JIT does not
//! cover.
//!
//! The same state runs a compiled pipeline's code — a Filter stage's steps and the Aggregate
//! above them, or an Aggregate alone (`exec::compiled_pipeline`) — kept from one Aggregate
//! state to the next (a worker's morsels), so adaptive's warm-up is paid once per stage.
//! A Project's computed items run compiled too ([`ProjectJit`], same modes and cache).
//!
//! NOT YET
//! =======
//! Scans and expands stay interpreted: the code takes the typed columns the interpreter
//! makes per batch (one call per batch, as the crate docs want). A compiled Project writes
//! its columns for the batch; the filter or aggregation above it reads them in a loop of
//! its own.

use crate::context::{Batch, ExecContext, JitProfile};
use crate::eval::prefetch::Prefetched;
use crate::eval::prefetch::PropertyReads;
use crate::eval::vector::{self, Vector};
use plexus_jit::{
    Cache, Column, CompiledCode, Computed, JitMode, Lookup, Mask, Program, Shape, Signature,
    Unsupported,
};
use plexus_plan::logical::BExpr;
use plexus_value::value::Value;
use std::sync::Arc;

#[cfg(test)]
#[path = "jit_differential.rs"]
mod differential;

/// An operator's JIT state — a Filter's, a compiled pipeline's (`compiled_pipeline`), a
/// Project's (`ProjectJit`): its program, the code for the signature last seen, what ran
/// (see the module docs).
pub(crate) struct OperatorJit {
    /// What is compiled: the filter's predicates, and the aggregation of a compiled pipeline.
    program: Program,
    shape: Result<Shape, Unsupported>,
    /// The code for the signature last seen, or the compile under way for it.
    current: Option<Lookup>,
    /// What ran since PROFILE last took it.
    profile: JitProfile,
    /// Batches in a row whose types compiled code does not take (see [`MAX_DECLINED_BATCHES`]).
    declined_in_a_row: u32,
    /// Rows seen under `adaptive` (see [`ADAPTIVE_MIN_ROWS`]).
    adaptive_rows: usize,
}

/// Rows a Filter interprets under `adaptive` before it asks for compiled code (about two
/// batches): interpreting them costs about what a compile does (0.2–0.5 ms), so a filter
/// that sees fewer has nothing to gain from one.
const ADAPTIVE_MIN_ROWS: usize = 4_096;

/// After this many batches in a row whose column or parameter types are not compiled (a
/// string column, say), a Filter stops trying: each try converts the leaf columns, which the
/// interpreter then converts again. Column types rarely change between batches of one scan.
const MAX_DECLINED_BATCHES: u32 = 4;

impl OperatorJit {
    /// For a Filter's predicate, or a fused chain's predicates bottom first, and the
    /// aggregation above them in a compiled pipeline.
    pub(crate) fn new(program: Program) -> OperatorJit {
        let shape = program.shape();
        let profile = JitProfile {
            unsupported: shape.as_ref().err().map(ToString::to_string),
            fused_filters: program.predicates.len(),
            // A filter's line says `+aggregate`; an Aggregate's own line needs no reminder.
            aggregate: program.aggregate.is_some() && !program.predicates.is_empty(),
            ..JitProfile::default()
        };
        OperatorJit {
            program,
            shape,
            current: None,
            profile,
            declined_in_a_row: 0,
            adaptive_rows: 0,
        }
    }

    /// What ran since the last call (PROFILE adds these up per operator).
    pub(crate) fn take_profile(&mut self) -> JitProfile {
        let fresh = JitProfile {
            unsupported: self.profile.unsupported.clone(),
            fused_filters: self.profile.fused_filters,
            aggregate: self.profile.aggregate,
            ..JitProfile::default()
        };
        std::mem::replace(&mut self.profile, fresh)
    }

    /// How many distinct properties (`n.key` leaves) the code reads.
    pub(crate) fn properties(&self) -> usize {
        self.shape.as_ref().map_or(0, properties)
    }

    /// Whether the JIT covers every operator of the predicates (EXPLAIN's `jit=eligible`).
    pub(crate) fn eligible(&self) -> bool {
        self.shape.is_ok()
    }

    /// Whether a batch of `rows` rows should try compiled code ([`OperatorJit::mask`]) — asked
    /// before its leaf columns are read: not with `jit` off, for an uncovered predicate, after
    /// [`MAX_DECLINED_BATCHES`], or for adaptive's first [`ADAPTIVE_MIN_ROWS`] rows. A batch
    /// it says no to runs interpreted, and is counted so.
    pub(crate) fn wants(&mut self, rows: usize, ctx: &ExecContext) -> bool {
        let mode = ctx.state.jit;
        let mut wants = mode != JitMode::Off
            && rows > 0
            && self.shape.is_ok()
            && self.declined_in_a_row < MAX_DECLINED_BATCHES;
        if wants && mode == JitMode::Adaptive {
            self.adaptive_rows += rows;
            wants = self.adaptive_rows > ADAPTIVE_MIN_ROWS;
        }
        if !wants {
            self.profile.interpreted_batches += 1;
        }
        wants
    }

    /// The predicates' mask over `batch` from compiled code, or `None`: run the interpreter.
    /// Only for a batch [`OperatorJit::wants`] said yes to.
    pub(crate) fn mask(
        &mut self,
        batch: &Batch,
        prefetched: &Prefetched,
        ctx: &ExecContext,
    ) -> Option<Mask> {
        self.with_code(batch, prefetched, ctx, |code, columns, params| {
            code.run(columns, params, batch.len())
        })
        .flatten()
    }

    /// Counts a batch that ran interpreted without asking for code.
    pub(crate) fn interpreted(&mut self) {
        self.profile.interpreted_batches += 1;
    }

    /// `run` with the compiled code for `batch` and its leaf columns and parameters, or
    /// `None` (nothing run): not compiled for these types, or not ready yet. Counts the
    /// batch as compiled when what `run` returns says it ran ([`Ran`]), else as interpreted.
    /// Only for a batch [`OperatorJit::wants`] said yes to.
    pub(crate) fn with_code<R: Ran>(
        &mut self,
        batch: &Batch,
        prefetched: &Prefetched,
        ctx: &ExecContext,
        run: impl FnOnce(&CompiledCode, &[Column], &[&Value]) -> R,
    ) -> Option<R> {
        let out = self.try_code(batch, prefetched, ctx, run);
        if out.as_ref().is_some_and(Ran::ran) {
            self.profile.compiled_batches += 1;
        } else {
            self.profile.interpreted_batches += 1;
        }
        out
    }

    fn try_code<R>(
        &mut self,
        batch: &Batch,
        prefetched: &Prefetched,
        ctx: &ExecContext,
        run: impl FnOnce(&CompiledCode, &[Column], &[&Value]) -> R,
    ) -> Option<R> {
        let mode = ctx.state.jit;
        let OperatorJit {
            program,
            shape,
            current,
            profile,
            declined_in_a_row,
            ..
        } = self;
        let shape = shape.as_ref().ok()?;
        // Counted as declined until the types are known to compile (reset below).
        *declined_in_a_row += 1;
        let vectors = shape
            .leaves
            .iter()
            .map(|leaf| {
                let expr = match leaf {
                    plexus_jit::Leaf::Slot(slot) => BExpr::Slot(*slot),
                    plexus_jit::Leaf::Property(slot, key) => {
                        BExpr::Property(Box::new(BExpr::Slot(*slot)), key.clone())
                    }
                };
                vector::leaf(&expr, batch, prefetched)
            })
            .collect::<Option<Vec<Vector>>>()?;
        let columns = vectors
            .iter()
            .map(|v| match v {
                Vector::Int(a) => Some(Column::Int(a)),
                Vector::Float(a) => Some(Column::Float(a)),
                Vector::Bool(a) => Some(Column::Bool(a)),
                Vector::Str(a) => Some(Column::Str(a)),
            })
            .collect::<Option<Vec<Column>>>()?;
        let params = shape
            .params
            .iter()
            .map(|name| ctx.params.get(&**name))
            .collect::<Option<Vec<&Value>>>()?;
        let signature = Signature::of(&columns, &params)?;
        let code = code(current, program, shape, &signature, mode, ctx);
        if !matches!(current, Some(Lookup::Unsupported(_))) {
            *declined_in_a_row = 0;
        }
        let compiled = code?;
        profile.compile_time = Some(compiled.compile_time());
        Some(run(&compiled, &columns, &params))
    }
}

/// Whether what compiled code returned means it ran (the batch counts as compiled).
pub(crate) trait Ran {
    fn ran(&self) -> bool;
}

impl<T> Ran for Option<T> {
    fn ran(&self) -> bool {
        self.is_some()
    }
}

/// The code for `signature`: kept from the last batch in `current`, or from the cache
/// (compiling on a miss); `None` while a background compile is under way or when the types
/// are not compiled.
fn code(
    current: &mut Option<Lookup>,
    program: &Program,
    shape: &Shape,
    signature: &Signature,
    mode: JitMode,
    ctx: &ExecContext,
) -> Option<Arc<CompiledCode>> {
    let fresh = match current.take() {
        Some(Lookup::Ready(code)) if code.signature() == signature => Lookup::Ready(code),
        Some(Lookup::Pending(cell)) => match Lookup::of(&cell) {
            Lookup::Ready(code) if code.signature() != signature => {
                lookup(program, shape, signature, mode, ctx)
            }
            other => other,
        },
        _ => lookup(program, shape, signature, mode, ctx),
    };
    let code = match &fresh {
        Lookup::Ready(code) => Some(code.clone()),
        _ => None,
    };
    *current = Some(fresh);
    code
}

fn lookup(
    program: &Program,
    shape: &Shape,
    signature: &Signature,
    mode: JitMode,
    ctx: &ExecContext,
) -> Lookup {
    let cache = Cache::global();
    let version = ctx.tx.schema_version();
    match mode {
        JitMode::On => cache.get_or_compile(program, shape, signature, version),
        _ => cache.get_or_spawn(program, shape, signature, version),
    }
}

/// A Project's compiled code: the computed items the JIT covers (not plain slots,
/// literals, parameters or property reads, which cost nothing to pass on), computed in one
/// loop into typed columns (`plexus_jit`, COMPILED PROJECTIONS). A batch the code does not
/// take — types not compiled, adaptive's first rows, some row raising an error — runs the
/// interpreter for every item, as without a JIT.
pub(crate) struct ProjectJit {
    jit: OperatorJit,
    reads: PropertyReads,
    /// The index in the Project's items of each compiled item, in the program's order.
    items: Vec<usize>,
}

impl ProjectJit {
    /// For a Project's `items`; `None` when none is computed or the JIT covers none.
    pub(crate) fn new(items: &[(usize, BExpr)]) -> Option<ProjectJit> {
        let (items, exprs): (Vec<usize>, Vec<BExpr>) = (items.iter().enumerate())
            .filter(|(_, (_, e))| {
                computed(e) && Program::project(std::slice::from_ref(e)).shape().is_ok()
            })
            .map(|(i, (_, e))| (i, e.clone()))
            .unzip();
        if items.is_empty() {
            return None;
        }
        Some(ProjectJit {
            reads: PropertyReads::of_filters(&exprs),
            jit: OperatorJit::new(Program::project(&exprs)),
            items,
        })
    }

    /// Per item of the Project, its column when compiled code computed it for `batch`.
    pub(crate) fn run(&mut self, batch: &Batch, ctx: &mut ExecContext) -> Vec<Option<Vector>> {
        let len = batch.len();
        if !self.jit.wants(len, ctx) {
            return Vec::new();
        }
        let prefetched = self.reads.fetch(batch, ctx);
        let computed = (self.jit)
            .with_code(batch, &prefetched, ctx, |code, columns, params| {
                code.run_project(columns, params, len)
            })
            .flatten();
        let Some(computed) = computed else {
            return Vec::new();
        };
        let mut out = vec![None; self.items.iter().max().map_or(0, |m| m + 1)];
        for (&i, column) in self.items.iter().zip(computed) {
            out[i] = Some(match column {
                Computed::Int(a) => Vector::Int(a),
                Computed::Float(a) => Vector::Float(a),
                Computed::Bool(a) => Vector::Bool(a),
            });
        }
        out
    }

    /// What ran since PROFILE last took it.
    pub(crate) fn take_profile(&mut self) -> JitProfile {
        self.jit.take_profile()
    }
}

/// How many distinct properties (`n.key` leaves) code of `shape` reads.
fn properties(shape: &Shape) -> usize {
    (shape.leaves.iter())
        .filter(|l| matches!(l, plexus_jit::Leaf::Property(..)))
        .count()
}

/// Whether a Project item computes something (not a slot, literal, parameter or a property
/// of a slot, which are passed on as they are).
fn computed(expr: &BExpr) -> bool {
    match expr {
        BExpr::Slot(_) | BExpr::Const(_) | BExpr::Param(_) => false,
        BExpr::Property(inner, _) => !matches!(**inner, BExpr::Slot(_)),
        _ => true,
    }
}

/// EXPLAIN's note on an operator of the plan when compiled code may run (`jit` on or
/// adaptive). On a Filter: ` jit=eligible` when the JIT covers every operator of its
/// predicate — it then runs compiled on batches whose columns are of compiled types
/// (numbers, booleans, strings for equality and prefix tests), PROFILE tells which did —
/// with ` fused` when its input is an eligible Filter too, whose stage it joins (one
/// compiled loop for the chain: `exec::filter`, FUSED CHAINS); or ` jit=no (why)`, run by
/// the interpreter. On an Aggregate (`exec::compiled_pipeline`): ` jit=eligible pipeline`
/// when it compiles into the loop of the eligible Filter (chain) right below it (reading no
/// property the filters do not),
/// ` jit=eligible` when it compiles on its own (its input's rows fed by a loop of their
/// own), ` jit=no (why)` when it runs in Rust (typed where it can: `exec::typed_aggregate`).
/// Nothing with `jit` off, nor on other operators: scans, expands, projections and the rest
/// run interpreted. Subquery expressions' plans are not annotated.
pub(crate) fn jit_note(op: &plexus_plan::LogicalPlan, mode: JitMode) -> String {
    use plexus_plan::LogicalPlan::{Aggregate, Filter, Project};
    if mode == JitMode::Off {
        return String::new();
    }
    let eligible = |predicate| plexus_jit::shape(std::slice::from_ref(predicate));
    match op {
        Filter { predicate, input } => match eligible(predicate) {
            Ok(_) => match &**input {
                Filter { predicate, .. } if eligible(predicate).is_ok() => {
                    " jit=eligible fused".to_string()
                }
                _ => " jit=eligible".to_string(),
            },
            Err(why) => format!(" jit=no ({why})"),
        },
        Project { items, .. } => {
            let computed: Vec<&BExpr> = (items.iter().map(|(_, e)| e))
                .filter(|e| computed(e))
                .collect();
            let shapes: Vec<_> = (computed.iter())
                .map(|e| Program::project(std::slice::from_ref(*e)).shape())
                .collect();
            match shapes.iter().find_map(|s| s.as_ref().err()) {
                _ if shapes.is_empty() => String::new(),
                _ if shapes.iter().any(Result::is_ok) => " jit=eligible".to_string(),
                Some(why) => format!(" jit=no ({why})"),
                None => String::new(),
            }
        }
        Aggregate {
            input,
            keys,
            aggregates,
        } => {
            // The chain the top Filter's stage holds, bottom first.
            let mut chain = Vec::new();
            let mut below = &**input;
            while let Filter { predicate, input } = below
                && eligible(predicate).is_ok()
            {
                chain.insert(0, predicate.clone());
                below = input;
            }
            let aggregation = super::aggregate::Aggregation {
                keys: keys.clone(),
                calls: aggregates.clone(),
            };
            let shape = |predicates: Vec<BExpr>| {
                let aggregate = super::typed_aggregate::program(&aggregation, false)?;
                let program = Program {
                    predicates,
                    aggregate: Some(aggregate),
                    project: Vec::new(),
                };
                program.shape().map_err(|why| why.to_string())
            };
            // In the filters' loop when it reads no property they do not (`exec::filter`,
            // COMPILED PIPELINES).
            let filters = Program::filter(&chain)
                .shape()
                .map_or(0, |s| properties(&s));
            if !chain.is_empty() && shape(chain).is_ok_and(|s| properties(&s) <= filters) {
                return " jit=eligible pipeline".to_string();
            }
            match shape(Vec::new()) {
                Ok(_) => " jit=eligible".to_string(),
                Err(why) => format!(" jit=no ({why})"),
            }
        }
        _ => String::new(),
    }
}
