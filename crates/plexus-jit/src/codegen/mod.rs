//! The typed half of compiling: Cranelift IR for one predicate and one [`Signature`], and
//! calling the result.
//!
//! WHAT
//! ====
//! [`compile`] emits one function, a loop over the rows (`lib.rs` gives its signature). Each
//! expression node becomes a [`Val`]: an SSA value (`i64` for INTEGER, `f64` for FLOAT, an
//! `i8` 0/1 for BOOLEAN, the first byte's address and a length for STRING) and an `i8` 0/1
//! validity. Every node is computed on every row, without branches except the byte loop of
//! a string equality or prefix test (`equal_prefix`, bounded by the shorter length), and
//! without calls except a FLOAT `%` and `^` ([`float_remainder`], [`float_power`]: Cranelift
//! has no floating-point remainder or power instruction); a node
//! that would raise an error on a row where its operands are valid ORs 1 into the `fail`
//! variable, which the function returns after the loop.
//!
//! Invariants (each relied on below):
//! - a BOOLEAN value is 0 or 1 on every row, valid or not (loads mask to one bit, `icmp` /
//!   `fcmp` give 0/1, constants and parameters are 0/1); an invalid row's INTEGER or FLOAT
//!   value is arbitrary and only ever reaches outputs through `band` with its validity;
//! - no instruction can trap: divisors are replaced by 1 where they are zero (or -1 under
//!   `i64::MIN`) — those rows set `fail`, so their value is never used;
//! - a type combination the row evaluator handles differently from the instructions here is
//!   [`Unsupported`]: arithmetic on booleans, boolean logic on numbers, unary
//!   minus on a boolean, a predicate that is not boolean. An integer compared with a float
//!   is compared exactly, as the row evaluator does (`int_float_order`), not by converting
//!   the integer (which rounds above 2^53).
//!
//! Running ([`CompiledCode::run`]) checks the batch's columns and parameters against the
//! signature, passes raw pointers to their buffers (validity bitmaps realigned to bit 0 by
//! Arrow's `sliced`, or an all-valid bitmap), and packs the byte outputs into a
//! `BooleanArray`. The module's memory is freed when the predicate is dropped.

use crate::shape::{Shape, Unsupported, leaf};
use crate::{Column, ColumnType, Program, Signature};
use arrow::array::{Array, BooleanArray};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{AbiParam, FuncRef, InstBuilder, MemFlagsData, Value as Ir, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use parking_lot::Mutex;
use plexus_cypher::ast::ComparisonOp;
use plexus_plan::logical::{ArithOp, BExpr, StringOp};
use plexus_value::value::Value;
use std::time::{Duration, Instant};

pub(crate) mod aggregate;
pub(crate) mod project;

/// A leaf column as the compiled function reads it.
#[repr(C)]
struct ColumnArg {
    /// `i64` / `f64` values, a bitmap of booleans (bit 0 = row 0), or a string column's
    /// `i32` offsets (`len + 1` of them, the first at the array's own offset).
    values: *const u8,
    /// Bit per row, 1 = valid (bit 0 = row 0).
    validity: *const u8,
    /// A string column's bytes (the offsets index into them); null for other types.
    data: *const u8,
}

/// A parameter as the compiled function reads it: its bits (`i64`, `f64`, 0/1, or a
/// string's address), 0/1, and a string's length in bytes.
#[repr(C)]
struct ParamArg {
    bits: u64,
    valid: u64,
    len: u64,
}

const PARAM_ARG_BYTES: i32 = 24;
const COLUMN_ARG_BYTES: i32 = 24;

type Entry =
    unsafe extern "C" fn(*const ColumnArg, *const ParamArg, u64, *mut u8, *mut u8, *mut u64) -> u32;

/// What compiled code gives for a batch.
#[derive(Debug, Clone)]
pub struct Mask {
    /// One predicate's value per row (true, false or null); a fused chain's, the Kleene AND
    /// of its predicates (true exactly where every filter of the chain keeps the row).
    pub mask: BooleanArray,
    /// Per predicate, bottom first: the rows on which it and every predicate before it are
    /// true — the rows each filter of a fused chain passes on (PROFILE's counts).
    pub passed: Vec<u64>,
}

/// A program (a filter, a chain of filters, a pipeline with its aggregation, a projection)
/// compiled for one signature; shared through the cache.
pub struct CompiledCode {
    entry: Code,
    signature: Signature,
    /// How many predicates (a fused chain's filters) the code evaluates.
    predicates: usize,
    compile_time: Duration,
    /// Owns the code `entry` points into; taken and freed on drop.
    module: Mutex<Option<JITModule>>,
    /// The string literals the code points into (their addresses are constants in it).
    _literals: Vec<Box<[u8]>>,
}

/// The compiled function, by what it computes.
#[derive(Clone)]
enum Code {
    /// A filter's (or a fused chain's) mask.
    Filter(Entry),
    /// A Project's computed items (`project`), with each one's output type.
    Project {
        entry: project::Entry,
        types: Vec<ColumnType>,
    },
    /// A pipeline's filters and aggregation (`aggregate`).
    Aggregate {
        entry: aggregate::Entry,
        /// The type of each call's argument as compiled (`None`: `count(*)`).
        call_types: Vec<Option<ColumnType>>,
        replay: bool,
    },
}

// SAFETY: `entry` points at immutable machine code owned by `module`, which lives as long as
// `self`; the code reads only the buffers passed to each call and touches no shared state.
// `JITModule` is only touched again on drop (behind the mutex).
unsafe impl Send for CompiledCode {}
unsafe impl Sync for CompiledCode {}

impl Drop for CompiledCode {
    fn drop(&mut self) {
        if let Some(module) = self.module.get_mut().take() {
            // SAFETY: `entry` dies with `self`: no pointer into the module's code remains.
            unsafe { module.free_memory() };
        }
    }
}

impl std::fmt::Debug for CompiledCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledCode")
            .field("signature", &self.signature)
            .field("compile_time", &self.compile_time)
            .finish()
    }
}

impl CompiledCode {
    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// How many predicates (a fused chain's filters) the code evaluates.
    pub fn predicates(&self) -> usize {
        self.predicates
    }

    /// How long generating and compiling the code took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// The predicates' mask over `len` rows and each one's pass count ([`Mask`]), or `None`:
    /// the columns or parameters do not match the signature, or some row would raise an
    /// error in some predicate — the caller then runs the interpreter (see SAME RESULTS,
    /// ALWAYS in the crate docs).
    pub fn run(&self, columns: &[Column], params: &[&Value], len: usize) -> Option<Mask> {
        let Code::Filter(entry) = self.entry else {
            return None;
        };
        let arguments = Arguments::of(&self.signature, columns, params, len)?;
        let mut value = vec![0u8; len];
        let mut valid = vec![0u8; len];
        let mut passed = vec![0u64; self.predicates];
        // SAFETY: the signature matched (`Arguments::of`), so the code reads, per column,
        // `len` values of the type it was compiled for and `len` bits of validity from
        // buffers of at least that length — for a string column `len + 1` offsets and the
        // bytes between them, which Arrow guarantees lie in its data buffer — one `ParamArg`
        // per parameter (a string's `len` bytes at its address), and writes `len` bytes to
        // each byte output and one count per predicate.
        let failed = unsafe {
            entry(
                arguments.columns.as_ptr(),
                arguments.params.as_ptr(),
                len as u64,
                value.as_mut_ptr(),
                valid.as_mut_ptr(),
                passed.as_mut_ptr(),
            )
        };
        drop(arguments);
        if failed != 0 {
            return None;
        }
        let nulls = (!valid.iter().all(|&b| b != 0)).then(|| NullBuffer::new(bits(&valid)));
        Some(Mask {
            mask: BooleanArray::new(bits(&value), nulls),
            passed,
        })
    }
}

/// A batch's columns and parameters as compiled code reads them ([`ColumnArg`],
/// [`ParamArg`]), with the realigned bitmaps their pointers point into.
struct Arguments {
    columns: Vec<ColumnArg>,
    params: Vec<ParamArg>,
    /// Kept alive until the call returns.
    _buffers: Vec<Buffer>,
}

impl Arguments {
    /// `None` if the columns and parameters are not of `signature`'s types or the columns
    /// not `len` rows long.
    fn of(
        signature: &Signature,
        columns: &[Column],
        params: &[&Value],
        len: usize,
    ) -> Option<Arguments> {
        if Signature::of(columns, params)? != *signature || columns.iter().any(|c| c.len() != len) {
            return None;
        }
        let all_valid = Buffer::from(vec![0xFFu8; len.div_ceil(8)]);
        // Realigned bitmaps, kept alive until the call returns.
        let mut kept: Vec<Buffer> = Vec::new();
        let mut validity = |nulls: Option<&NullBuffer>| match nulls {
            Some(nulls) => {
                kept.push(nulls.inner().sliced());
                kept.last().map_or(all_valid.as_ptr(), Buffer::as_ptr)
            }
            None => all_valid.as_ptr(),
        };
        let mut args = Vec::with_capacity(columns.len());
        let mut bool_values: Vec<Buffer> = Vec::new();
        for column in columns {
            let arg = match column {
                Column::Int(a) => ColumnArg {
                    values: a.values().as_ptr().cast(),
                    validity: validity(a.nulls()),
                    data: std::ptr::null(),
                },
                Column::Float(a) => ColumnArg {
                    values: a.values().as_ptr().cast(),
                    validity: validity(a.nulls()),
                    data: std::ptr::null(),
                },
                Column::Str(a) => ColumnArg {
                    values: a.value_offsets().as_ptr().cast(),
                    validity: validity(a.nulls()),
                    data: a.value_data().as_ptr(),
                },
                Column::Bool(a) => {
                    bool_values.push(a.values().sliced());
                    ColumnArg {
                        values: bool_values
                            .last()
                            .map_or(all_valid.as_ptr(), Buffer::as_ptr),
                        validity: validity(a.nulls()),
                        data: std::ptr::null(),
                    }
                }
            };
            args.push(arg);
        }
        let params: Vec<ParamArg> = params
            .iter()
            .map(|value| match value {
                Value::Int(i) => ParamArg {
                    bits: *i as u64,
                    valid: 1,
                    len: 0,
                },
                Value::Float(f) => ParamArg {
                    bits: f.to_bits(),
                    valid: 1,
                    len: 0,
                },
                Value::Bool(b) => ParamArg {
                    bits: u64::from(*b),
                    valid: 1,
                    len: 0,
                },
                // The value outlives the call: `params` borrows it.
                Value::String(s) => ParamArg {
                    bits: s.as_ptr() as u64,
                    valid: 1,
                    len: s.len() as u64,
                },
                _ => ParamArg {
                    bits: 0,
                    valid: 0,
                    len: 0,
                },
            })
            .collect();
        kept.extend(bool_values);
        kept.push(all_valid);
        Some(Arguments {
            columns: args,
            params,
            _buffers: kept,
        })
    }
}

/// One bit per byte of `bytes` (set where the byte is not zero): the compiled code writes a
/// byte per row, Arrow keeps a bit (appending bit by bit took as long as running the code;
/// a loop over each word's 64 bytes still took a tenth of a filtered scan's time). Eight
/// bytes at a time: read as a word, each non-zero byte's top bit set, and the eight top
/// bits gathered into one byte by a multiply (each lands on its own bit of the top byte,
/// no two sums overlapping).
fn bits(bytes: &[u8]) -> BooleanBuffer {
    const LOW_SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut packed = Vec::with_capacity(bytes.len().div_ceil(8));
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        // Bit 7 of each byte: set where the byte's low seven bits or its top bit are.
        let tops = (((word & LOW_SEVEN) + LOW_SEVEN) | word) & !LOW_SEVEN;
        packed.push(((tops >> 7).wrapping_mul(GATHER) >> 56) as u8);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        packed.push(
            (rest.iter().enumerate()).fold(0, |byte, (i, &b)| byte | (u8::from(b != 0) << i)),
        );
    }
    BooleanBuffer::new(Buffer::from_vec(packed), 0, bytes.len())
}

/// Compiles `program` for `signature` (see the module docs): a filter's function, or a
/// pipeline's with its aggregation (`aggregate`).
pub(crate) fn compile(
    program: &Program,
    shape: &Shape,
    signature: &Signature,
) -> Result<CompiledCode, Unsupported> {
    let started = Instant::now();
    let predicates = &program.predicates[..];
    if signature.leaves.len() != shape.leaves.len()
        || signature.params.len() != shape.params.len()
        || predicates.len() != shape.predicates
        || (predicates.is_empty() && program.aggregate.is_none() && program.project.is_empty())
    {
        return Err(Unsupported::new("a signature of another shape"));
    }
    let (code, module, literals, entry) = match &program.aggregate {
        None if !program.project.is_empty() => {
            let mut types = Vec::new();
            let (code, module, literals) = build(project::PARAMS, |b, pointer, calls| {
                let inputs = (shape, signature, pointer, calls);
                project::emit(b, &program.project, inputs, &mut types)
            })?;
            // SAFETY: as below, with `project::Entry`'s signature (four parameters).
            let entry = unsafe { std::mem::transmute::<*const u8, project::Entry>(code) };
            (code, module, literals, Code::Project { entry, types })
        }
        None => {
            let (code, module, literals) = build(FILTER_PARAMS, |b, pointer, calls| {
                emit_loop(b, predicates, shape, signature, pointer, calls)
            })?;
            // SAFETY: `code` is the function just defined with exactly `Entry`'s signature
            // (six pointer-sized/`u64` parameters, `u32` result, the platform's C calling
            // convention).
            let entry = unsafe { std::mem::transmute::<*const u8, Entry>(code) };
            (code, module, literals, Code::Filter(entry))
        }
        Some(aggregate) => {
            let mut call_types = Vec::new();
            let (code, module, literals) = build(aggregate::PARAMS, |b, pointer, calls| {
                let inputs = (shape, signature, pointer, calls);
                aggregate::emit(b, predicates, aggregate, inputs, &mut call_types)
            })?;
            // SAFETY: as above, with `aggregate::Entry`'s signature (seven parameters).
            let entry = unsafe { std::mem::transmute::<*const u8, aggregate::Entry>(code) };
            let code_kind = Code::Aggregate {
                entry,
                call_types,
                replay: aggregate.replay,
            };
            (code, module, literals, code_kind)
        }
    };
    debug_assert!(!code.is_null());
    Ok(CompiledCode {
        entry,
        signature: signature.clone(),
        predicates: predicates.len(),
        compile_time: started.elapsed(),
        module: Mutex::new(Some(module)),
        _literals: literals,
    })
}

/// The parameters of a filter's function ([`Entry`]): pointers, then the row count.
const FILTER_PARAMS: &[Param] = &[
    Param::Pointer,
    Param::Pointer,
    Param::I64,
    Param::Pointer,
    Param::Pointer,
    Param::Pointer,
];

/// A parameter of a compiled function, as declared to Cranelift.
#[derive(Clone, Copy)]
enum Param {
    Pointer,
    I64,
}

/// One module holding one function of parameters `params` (returning an `i32`) whose body
/// `emit` writes: its code's address, the module (which owns the code) and the string
/// literals the code points into.
type Built = (*const u8, JITModule, Vec<Box<[u8]>>);

fn build(
    params: &[Param],
    emit: impl FnOnce(
        &mut FunctionBuilder,
        types::Type,
        FloatCalls,
    ) -> Result<Vec<Box<[u8]>>, Unsupported>,
) -> Result<Built, Unsupported> {
    let backend = |e: &dyn std::fmt::Display| Unsupported::new(format!("code generation: {e}"));
    let mut builder = JITBuilder::with_flags(&[("opt_level", "speed")], default_libcall_names())
        .map_err(|e| backend(&e))?;
    for (symbol, function) in FLOAT_CALLS {
        builder.symbol(symbol, function as *const u8);
    }
    let mut module = JITModule::new(builder);
    let pointer = module.target_config().pointer_type();
    let mut float_signature = module.make_signature();
    float_signature.params.push(AbiParam::new(types::F64));
    float_signature.params.push(AbiParam::new(types::F64));
    float_signature.returns.push(AbiParam::new(types::F64));
    let mut float_ids = Vec::with_capacity(FLOAT_CALLS.len());
    for (symbol, _) in FLOAT_CALLS {
        let id = module
            .declare_function(symbol, Linkage::Import, &float_signature)
            .map_err(|e| backend(&e))?;
        float_ids.push(id);
    }
    let mut ir_signature = module.make_signature();
    for param in params {
        let ty = match param {
            Param::Pointer => pointer,
            Param::I64 => types::I64,
        };
        ir_signature.params.push(AbiParam::new(ty));
    }
    ir_signature.returns.push(AbiParam::new(types::I32));
    let id = module
        .declare_function("compiled", Linkage::Local, &ir_signature)
        .map_err(|e| backend(&e))?;
    let mut context = module.make_context();
    context.func.signature = ir_signature;
    let mut function_context = FunctionBuilderContext::new();
    let [fmod, pow] =
        [float_ids[0], float_ids[1]].map(|id| module.declare_func_in_func(id, &mut context.func));
    let literals = {
        let mut b = FunctionBuilder::new(&mut context.func, &mut function_context);
        let literals = emit(&mut b, pointer, FloatCalls { fmod, pow })?;
        b.finalize(module.isa().frontend_config());
        literals
    };
    module
        .define_function(id, &mut context)
        .map_err(|e| backend(&e))?;
    module.clear_context(&mut context);
    module.finalize_definitions().map_err(|e| backend(&e))?;
    let code = module.get_finalized_function(id);
    Ok((code, module, literals))
}

/// A leaf as the code reads it: its type, values, validity and (strings) data pointers.
type LeafArg = (ColumnType, Ir, Ir, Ir);

/// The head of a loop over rows `start..len`: a jump to a new header block, which goes on to a
/// new body block while the row is below `len` and to `exit` (with `exit_args`) after. Leaves
/// the builder in the body; returns the row variable, the header (where the body jumps back
/// after the next row is set) and the row in the body.
fn row_loop(
    b: &mut FunctionBuilder,
    (start, len): (Ir, Ir),
    (exit, exit_args): (
        cranelift_codegen::ir::Block,
        &[cranelift_codegen::ir::BlockArg],
    ),
) -> (Variable, cranelift_codegen::ir::Block, Ir) {
    let row = b.declare_var(types::I64);
    b.def_var(row, start);
    let header = b.create_block();
    let body = b.create_block();
    b.ins().jump(header, &[]);
    b.switch_to_block(header);
    let r = b.use_var(row);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, r, len);
    b.ins().brif(more, body, &[], exit, exit_args);
    b.switch_to_block(body);
    let r = b.use_var(row);
    (row, header, r)
}

/// The leaves' pointers ([`ColumnArg`]) and the parameters' values, loaded at the entry of a
/// function from its `columns` and `params` arguments.
fn load_inputs(
    b: &mut FunctionBuilder,
    signature: &Signature,
    pointer: types::Type,
    columns: Ir,
    params: Ir,
) -> (Vec<LeafArg>, Vec<Val>) {
    let flags = MemFlagsData::trusted();
    let mut leaves = Vec::with_capacity(signature.leaves.len());
    for (i, ty) in signature.leaves.iter().enumerate() {
        let offset = i as i32 * COLUMN_ARG_BYTES;
        let values = b.ins().load(pointer, flags, columns, offset);
        let validity = b.ins().load(pointer, flags, columns, offset + 8);
        let data = b.ins().load(pointer, flags, columns, offset + 16);
        leaves.push((*ty, values, validity, data));
    }
    let mut param_values = Vec::with_capacity(signature.params.len());
    for (i, ty) in signature.params.iter().enumerate() {
        let offset = i as i32 * PARAM_ARG_BYTES;
        let value = match ty {
            ColumnType::Int => b.ins().load(types::I64, flags, params, offset),
            ColumnType::Float => b.ins().load(types::F64, flags, params, offset),
            ColumnType::Bool | ColumnType::Null => {
                let bits = b.ins().load(types::I64, flags, params, offset);
                b.ins().ireduce(types::I8, bits)
            }
            ColumnType::Str => b.ins().load(pointer, flags, params, offset),
        };
        let valid = b.ins().load(types::I64, flags, params, offset + 8);
        let valid = b.ins().ireduce(types::I8, valid);
        let len =
            (*ty == ColumnType::Str).then(|| b.ins().load(types::I64, flags, params, offset + 16));
        param_values.push(Val {
            ty: *ty,
            value,
            valid,
            len,
        });
    }
    (leaves, param_values)
}

/// The function: load the leaves' pointers and the parameters, loop over the rows. Returns
/// the string literals the code points into (the caller keeps them alive with the code).
fn emit_loop(
    b: &mut FunctionBuilder,
    predicates: &[BExpr],
    shape: &Shape,
    signature: &Signature,
    pointer: types::Type,
    calls: FloatCalls,
) -> Result<Vec<Box<[u8]>>, Unsupported> {
    let entry = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let [columns, params, len, out_value, out_valid, out_passed] = b.block_params(entry) else {
        return Err(Unsupported::new("code generation: function parameters"));
    };
    let (columns, params, len, out_value, out_valid, out_passed) =
        (*columns, *params, *len, *out_value, *out_valid, *out_passed);
    let flags = MemFlagsData::trusted();
    let (leaves, param_values) = load_inputs(b, signature, pointer, columns, params);
    let fail = b.declare_var(types::I8);
    let zero = b.ins().iconst(types::I64, 0);
    let no = b.ins().iconst(types::I8, 0);
    b.def_var(fail, no);
    // Per predicate: the rows on which it and all before it are true.
    let passed: Vec<Variable> = predicates
        .iter()
        .map(|_| {
            let count = b.declare_var(types::I64);
            b.def_var(count, zero);
            count
        })
        .collect();
    let (row, header, r) = row_loop(b, (zero, len), (exit, &[]));
    let inputs = (shape, (leaves, param_values));
    let mut g = Gen::new(b, inputs, (r, fail), (pointer, calls));
    // Every predicate on every row (a fused chain's upper filters too, on rows a lower one
    // drops: an error there falls back, and the interpreter decides, as for a one-sided
    // error under AND). The mask is their Kleene AND; `prefix` is 1 while all so far are true.
    let mut result: Option<Val> = None;
    let mut prefix: Option<Ir> = None;
    for (predicate, count) in predicates.iter().zip(&passed) {
        let value = g.expr(predicate)?;
        if !matches!(value.ty, ColumnType::Bool | ColumnType::Null) {
            return Err(Unsupported::new("a predicate that is not boolean"));
        }
        let truth = g.b.ins().band(value.value, value.valid);
        let all = match prefix {
            Some(before) => g.b.ins().band(before, truth),
            None => truth,
        };
        prefix = Some(all);
        let wide = g.b.ins().uextend(types::I64, all);
        let so_far = g.b.use_var(*count);
        let sum = g.b.ins().iadd(so_far, wide);
        g.b.def_var(*count, sum);
        result = Some(match result {
            Some(below) => g.kleene(true, below, value),
            None => value,
        });
    }
    let result = result.ok_or_else(|| Unsupported::new("no predicate"))?;
    let (b, literals) = (g.b, g.literals);
    let value = b.ins().band(result.value, result.valid);
    let value_at = b.ins().iadd(out_value, r);
    b.ins().store(flags, value, value_at, 0);
    let valid_at = b.ins().iadd(out_valid, r);
    b.ins().store(flags, result.valid, valid_at, 0);
    let next = b.ins().iadd_imm_u(r, 1);
    b.def_var(row, next);
    b.ins().jump(header, &[]);

    b.switch_to_block(exit);
    for (i, count) in passed.iter().enumerate() {
        let total = b.use_var(*count);
        b.ins().store(flags, total, out_passed, i as i32 * 8);
    }
    let failed = b.use_var(fail);
    let failed = b.ins().uextend(types::I32, failed);
    b.ins().return_(&[failed]);
    b.seal_all_blocks();
    Ok(literals)
}

/// One node's value on the current row.
#[derive(Clone, Copy)]
struct Val {
    ty: ColumnType,
    /// For a STRING: the address of its first byte.
    value: Ir,
    valid: Ir,
    /// A STRING's length in bytes; `None` for the other types.
    len: Option<Ir>,
}

struct Gen<'g, 'f> {
    b: &'g mut FunctionBuilder<'f>,
    shape: &'g Shape,
    /// Per leaf of the shape: its type, values, validity and (strings) data pointers.
    leaves: Vec<LeafArg>,
    params: Vec<Val>,
    row: Ir,
    fail: Variable,
    /// String literals, owned by the compiled predicate (see `emit_loop`).
    literals: Vec<Box<[u8]>>,
    pointer: types::Type,
    calls: FloatCalls,
}

/// The functions compiled code calls, imported into it: Cranelift has no floating-point
/// remainder or power instruction.
#[derive(Clone, Copy)]
struct FloatCalls {
    /// [`float_remainder`].
    fmod: FuncRef,
    /// [`float_power`].
    pow: FuncRef,
}

/// The symbols of [`FloatCalls`], in its order.
const FLOAT_CALLS: [(&str, extern "C" fn(f64, f64) -> f64); 2] = [
    ("plexus_jit_float_remainder", float_remainder),
    ("plexus_jit_float_power", float_power),
];

/// FLOAT `%` as the row evaluator computes it (Rust's `%` on `f64`, C's `fmod`: the sign of
/// the dividend, exact). Called once per row by code with a float `%`; it cannot fail.
extern "C" fn float_remainder(x: f64, y: f64) -> f64 {
    x % y
}

/// `^` as the row evaluator computes it (`f64::powf` of both operands as floats: `2 ^ 3` is
/// `8.0`). Called once per row by code with a `^`; it cannot fail.
extern "C" fn float_power(x: f64, y: f64) -> f64 {
    x.powf(y)
}

impl<'g, 'f> Gen<'g, 'f> {
    /// A generator for the body of a row loop: the loaded `inputs` ([`load_inputs`]), the
    /// body's `row`, the `fail` variable.
    fn new(
        b: &'g mut FunctionBuilder<'f>,
        (shape, inputs): (&'g Shape, (Vec<LeafArg>, Vec<Val>)),
        (row, fail): (Ir, Variable),
        (pointer, calls): (types::Type, FloatCalls),
    ) -> Gen<'g, 'f> {
        Gen {
            b,
            shape,
            leaves: inputs.0,
            params: inputs.1,
            row,
            fail,
            literals: Vec::new(),
            pointer,
            calls,
        }
    }
}

impl Gen<'_, '_> {
    fn expr(&mut self, expr: &BExpr) -> Result<Val, Unsupported> {
        match expr {
            BExpr::Const(value) => self.constant(value),
            BExpr::Param(name) => {
                let i = self.shape.params.iter().position(|p| p == name);
                i.and_then(|i| self.params.get(i).copied())
                    .ok_or_else(|| Unsupported::new(format!("parameter ${name} outside the shape")))
            }
            BExpr::Slot(_) | BExpr::Property(..) => {
                let found = leaf(expr).and_then(|l| self.shape.leaves.iter().position(|x| *x == l));
                let i = found.ok_or_else(|| Unsupported::new("a leaf outside the shape"))?;
                Ok(self.load_leaf(i))
            }
            BExpr::Compare(operands, ops) if ops.len() == 1 && operands.len() == 2 => {
                let a = self.expr(&operands[0])?;
                let b = self.expr(&operands[1])?;
                self.compare(ops[0], a, b)
            }
            BExpr::Arith(op, a, b) => {
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                self.arith(*op, a, b)
            }
            BExpr::And(a, b) | BExpr::Or(a, b) => {
                let x = self.boolean(a)?;
                let y = self.boolean(b)?;
                Ok(self.kleene(matches!(expr, BExpr::And(..)), x, y))
            }
            BExpr::Xor(a, b) => {
                // Null if either side is; no short cut, as in the row evaluator.
                let x = self.boolean(a)?;
                let y = self.boolean(b)?;
                let value = self.b.ins().bxor(x.value, y.value);
                let valid = self.b.ins().band(x.valid, y.valid);
                Ok(self.bool_val(value, valid))
            }
            BExpr::Negate(x) => {
                let x = self.expr(x)?;
                self.negate(x)
            }
            BExpr::StringOp(StringOp::StartsWith, a, b) => {
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                self.starts_with(a, b)
            }
            BExpr::Not(x) => {
                let x = self.boolean(x)?;
                let value = self.b.ins().bxor_imm_u(x.value, 1);
                Ok(Val { value, ..x })
            }
            BExpr::IsNull(x, negated) => {
                let x = self.expr(x)?;
                let value = if *negated {
                    x.valid
                } else {
                    self.b.ins().bxor_imm_u(x.valid, 1)
                };
                let valid = self.b.ins().iconst(types::I8, 1);
                Ok(Val {
                    ty: ColumnType::Bool,
                    value,
                    valid,
                    len: None,
                })
            }
            BExpr::In(item, list) => {
                let item = self.expr(item)?;
                let candidates: Vec<&Value> = match &**list {
                    BExpr::Const(Value::List(items)) => items.iter().collect(),
                    BExpr::List(items) => items
                        .iter()
                        .map(|e| match e {
                            BExpr::Const(v) => Ok(v),
                            _ => Err(Unsupported::new("IN over a list that is not constant")),
                        })
                        .collect::<Result<_, _>>()?,
                    _ => return Err(Unsupported::new("IN over a list that is not constant")),
                };
                self.in_list(item, &candidates)
            }
            other => Err(crate::shape::shape(std::slice::from_ref(other))
                .err()
                .unwrap_or_else(|| Unsupported::new("an operator outside the shape"))),
        }
    }

    fn boolean(&mut self, expr: &BExpr) -> Result<Val, Unsupported> {
        let x = self.expr(expr)?;
        match x.ty {
            ColumnType::Bool | ColumnType::Null => Ok(x),
            _ => Err(Unsupported::new("boolean logic on a number")),
        }
    }

    fn i8(&mut self, v: i64) -> Ir {
        self.b.ins().iconst(types::I8, v)
    }

    fn null(&mut self) -> Val {
        let zero = self.i8(0);
        Val {
            ty: ColumnType::Null,
            value: zero,
            valid: zero,
            len: None,
        }
    }

    fn bool_val(&mut self, value: Ir, valid: Ir) -> Val {
        Val {
            ty: ColumnType::Bool,
            value,
            valid,
            len: None,
        }
    }

    fn constant(&mut self, value: &Value) -> Result<Val, Unsupported> {
        let one = self.i8(1);
        let (ty, value) = match value {
            Value::Null => return Ok(self.null()),
            Value::Bool(b) => (ColumnType::Bool, self.i8(i64::from(*b))),
            Value::Int(i) => (ColumnType::Int, self.b.ins().iconst(types::I64, *i)),
            Value::Float(f) => (ColumnType::Float, self.b.ins().f64const(*f)),
            Value::String(s) => {
                let bytes: Box<[u8]> = s.as_bytes().into();
                let address = self.b.ins().iconst(self.pointer, bytes.as_ptr() as i64);
                let len = self.b.ins().iconst(types::I64, bytes.len() as i64);
                // The box's heap bytes do not move when the box does.
                self.literals.push(bytes);
                return Ok(Val {
                    ty: ColumnType::Str,
                    value: address,
                    valid: one,
                    len: Some(len),
                });
            }
            other => return Err(Unsupported::new(format!("a {} literal", other.type_name()))),
        };
        Ok(Val {
            ty,
            value,
            valid: one,
            len: None,
        })
    }

    /// Bit `row` of the bitmap at `base`, as an `i8` 0/1.
    fn bit(&mut self, base: Ir) -> Ir {
        let byte_index = self.b.ins().ushr_imm_u(self.row, 3);
        let address = self.b.ins().iadd(base, byte_index);
        let byte = self
            .b
            .ins()
            .load(types::I8, MemFlagsData::trusted(), address, 0);
        let shift = self.b.ins().band_imm_u(self.row, 7);
        let shift = self.b.ins().ireduce(types::I8, shift);
        let shifted = self.b.ins().ushr(byte, shift);
        self.b.ins().band_imm_u(shifted, 1)
    }

    fn load_leaf(&mut self, i: usize) -> Val {
        let (ty, values, validity, data) = self.leaves[i];
        let valid = self.bit(validity);
        if ty == ColumnType::Str {
            // Row r's bytes are data[offsets[r] .. offsets[r + 1]].
            let flags = MemFlagsData::trusted();
            let at = self.b.ins().ishl_imm_u(self.row, 2);
            let at = self.b.ins().iadd(values, at);
            let start = self.b.ins().load(types::I32, flags, at, 0);
            let end = self.b.ins().load(types::I32, flags, at, 4);
            let start = self.b.ins().sextend(types::I64, start);
            let end = self.b.ins().sextend(types::I64, end);
            let len = self.b.ins().isub(end, start);
            let value = self.b.ins().iadd(data, start);
            return Val {
                ty,
                value,
                valid,
                len: Some(len),
            };
        }
        let value = match ty {
            ColumnType::Int | ColumnType::Float => {
                let offset = self.b.ins().ishl_imm_u(self.row, 3);
                let address = self.b.ins().iadd(values, offset);
                let mem = if ty == ColumnType::Int {
                    types::I64
                } else {
                    types::F64
                };
                self.b.ins().load(mem, MemFlagsData::trusted(), address, 0)
            }
            // Strings returned above.
            ColumnType::Bool | ColumnType::Null | ColumnType::Str => self.bit(values),
        };
        Val {
            ty,
            value,
            valid,
            len: None,
        }
    }

    /// ORs `failed` into the fail flag where both `a` and `b` are valid.
    fn fail_where(&mut self, failed: Ir, a: Val, b: Val) {
        let both = self.b.ins().band(a.valid, b.valid);
        let failed = self.b.ins().band(failed, both);
        let so_far = self.b.use_var(self.fail);
        let now = self.b.ins().bor(so_far, failed);
        self.b.def_var(self.fail, now);
    }

    fn as_float(&mut self, v: Val) -> Ir {
        match v.ty {
            ColumnType::Int => self.b.ins().fcvt_from_sint(types::F64, v.value),
            _ => v.value,
        }
    }

    fn arith(&mut self, op: ArithOp, a: Val, b: Val) -> Result<Val, Unsupported> {
        use ColumnType::{Bool, Float, Int, Null};
        if a.ty == Null || b.ty == Null {
            // The row evaluator answers null before looking at the other side's type.
            return Ok(self.null());
        }
        let valid = self.b.ins().band(a.valid, b.valid);
        match (a.ty, b.ty) {
            (Bool, _) | (_, Bool) => Err(Unsupported::new("arithmetic on a boolean")),
            (ColumnType::Str, _) | (_, ColumnType::Str) => {
                Err(Unsupported::new("arithmetic on a string"))
            }
            _ if op == ArithOp::Power => {
                // A FLOAT whatever the operands' types, as interpreted.
                let (x, y) = (self.as_float(a), self.as_float(b));
                let call = self.b.ins().call(self.calls.pow, &[x, y]);
                Ok(Val {
                    ty: Float,
                    value: self.b.inst_results(call)[0],
                    valid,
                    len: None,
                })
            }
            (Int, Int) => {
                let (x, y) = (a.value, b.value);
                let value = match op {
                    ArithOp::Add | ArithOp::Subtract | ArithOp::Multiply => {
                        let (value, overflow) = match op {
                            ArithOp::Add => self.b.ins().sadd_overflow(x, y),
                            ArithOp::Subtract => self.b.ins().ssub_overflow(x, y),
                            _ => self.b.ins().smul_overflow(x, y),
                        };
                        self.fail_where(overflow, a, b);
                        value
                    }
                    ArithOp::Divide | ArithOp::Modulo => {
                        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                        let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                        let min = self.b.ins().icmp_imm_s(IntCC::Equal, x, i64::MIN);
                        let overflow = self.b.ins().band(minus_one, min);
                        let one = self.b.ins().iconst(types::I64, 1);
                        if op == ArithOp::Divide {
                            // Zero: an error; i64::MIN / -1: overflows (an error).
                            let bad = self.b.ins().bor(zero, overflow);
                            self.fail_where(bad, a, b);
                            let divisor = self.b.ins().select(bad, one, y);
                            self.b.ins().sdiv(x, divisor)
                        } else {
                            // Zero: an error; x % -1 is 0 (i64::MIN % -1 included).
                            self.fail_where(zero, a, b);
                            let replace = self.b.ins().bor(zero, minus_one);
                            let divisor = self.b.ins().select(replace, one, y);
                            self.b.ins().srem(x, divisor)
                        }
                    }
                    ArithOp::Power => unreachable!("^ is computed above"),
                };
                Ok(Val {
                    ty: Int,
                    value,
                    valid,
                    len: None,
                })
            }
            _ => {
                if op == ArithOp::Divide && b.ty == Int {
                    // An integer zero divisor is an error even under a float dividend.
                    let zero = self.b.ins().icmp_imm_s(IntCC::Equal, b.value, 0);
                    self.fail_where(zero, a, b);
                }
                let (x, y) = (self.as_float(a), self.as_float(b));
                let value = match op {
                    ArithOp::Add => self.b.ins().fadd(x, y),
                    ArithOp::Subtract => self.b.ins().fsub(x, y),
                    ArithOp::Multiply => self.b.ins().fmul(x, y),
                    ArithOp::Modulo => {
                        let call = self.b.ins().call(self.calls.fmod, &[x, y]);
                        self.b.inst_results(call)[0]
                    }
                    _ => self.b.ins().fdiv(x, y),
                };
                Ok(Val {
                    ty: Float,
                    value,
                    valid,
                    len: None,
                })
            }
        }
    }

    fn compare(&mut self, op: ComparisonOp, a: Val, b: Val) -> Result<Val, Unsupported> {
        use ColumnType::{Bool, Float, Int, Null};
        if a.ty == Null || b.ty == Null {
            return Ok(self.null());
        }
        let value = match (a.ty, b.ty) {
            (Int, Int) | (Bool, Bool) => {
                let signed = a.ty == Int;
                let cc = match op {
                    ComparisonOp::Eq => IntCC::Equal,
                    ComparisonOp::NotEq => IntCC::NotEqual,
                    ComparisonOp::Lt if signed => IntCC::SignedLessThan,
                    ComparisonOp::Le if signed => IntCC::SignedLessThanOrEqual,
                    ComparisonOp::Gt if signed => IntCC::SignedGreaterThan,
                    ComparisonOp::Ge if signed => IntCC::SignedGreaterThanOrEqual,
                    ComparisonOp::Lt => IntCC::UnsignedLessThan,
                    ComparisonOp::Le => IntCC::UnsignedLessThanOrEqual,
                    ComparisonOp::Gt => IntCC::UnsignedGreaterThan,
                    ComparisonOp::Ge => IntCC::UnsignedGreaterThanOrEqual,
                };
                self.b.ins().icmp(cc, a.value, b.value)
            }
            (Float, Float) => {
                // Ordered comparisons are false on NaN; `<>` is "unordered or not equal".
                let cc = match op {
                    ComparisonOp::Eq => FloatCC::Equal,
                    ComparisonOp::NotEq => FloatCC::NotEqual,
                    ComparisonOp::Lt => FloatCC::LessThan,
                    ComparisonOp::Le => FloatCC::LessThanOrEqual,
                    ComparisonOp::Gt => FloatCC::GreaterThan,
                    ComparisonOp::Ge => FloatCC::GreaterThanOrEqual,
                };
                self.b.ins().fcmp(cc, a.value, b.value)
            }
            (ColumnType::Str, ColumnType::Str) => {
                let equal = match op {
                    ComparisonOp::Eq | ComparisonOp::NotEq => self.same_bytes(a, b)?,
                    _ => return Err(Unsupported::new("an ordering of strings")),
                };
                if op == ComparisonOp::NotEq {
                    self.b.ins().bxor_imm_u(equal, 1)
                } else {
                    equal
                }
            }
            (ColumnType::Str, _) | (_, ColumnType::Str) => {
                return Err(Unsupported::new(
                    "a comparison of a string with another type",
                ));
            }
            (Int, Float) => self.int_float_compare(op, a.value, b.value),
            (Float, Int) => {
                let mirrored = match op {
                    ComparisonOp::Lt => ComparisonOp::Gt,
                    ComparisonOp::Le => ComparisonOp::Ge,
                    ComparisonOp::Gt => ComparisonOp::Lt,
                    ComparisonOp::Ge => ComparisonOp::Le,
                    same => same,
                };
                self.int_float_compare(mirrored, b.value, a.value)
            }
            _ => return Err(Unsupported::new("a comparison of a boolean with a number")),
        };
        let valid = self.b.ins().band(a.valid, b.valid);
        Ok(self.bool_val(value, valid))
    }

    /// `-x`: an integer's negation fails on `i64::MIN` (it overflows), a float's flips its
    /// sign (NaN and ±0.0 included), null stays null.
    fn negate(&mut self, x: Val) -> Result<Val, Unsupported> {
        let value = match x.ty {
            ColumnType::Null => return Ok(self.null()),
            ColumnType::Bool => return Err(Unsupported::new("unary minus on a boolean")),
            ColumnType::Str => return Err(Unsupported::new("unary minus on a string")),
            ColumnType::Int => {
                let min = self.b.ins().icmp_imm_s(IntCC::Equal, x.value, i64::MIN);
                self.fail_where(min, x, x);
                self.b.ins().ineg(x.value)
            }
            ColumnType::Float => self.b.ins().fneg(x.value),
        };
        Ok(Val { value, ..x })
    }

    /// `i <op> f` for an INTEGER `i` and a FLOAT `f`, exactly as `plexus_value::compare`
    /// orders them: NaN is unordered (`=` false, `<>` true, the rest false); from 2^63 up a
    /// float is above every integer, below -2^63 under every one; between, `i` is compared
    /// with the float's whole part, and an equal whole part is decided by the fraction's
    /// sign. Branch-free: every case is computed, the right one selected.
    fn int_float_compare(&mut self, op: ComparisonOp, i: Ir, f: Ir) -> Ir {
        let nan = self.b.ins().fcmp(FloatCC::Unordered, f, f);
        let limit = self.b.ins().f64const(I64_LIMIT_F64);
        let above = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, f, limit);
        let minus_limit = self.b.ins().f64const(-I64_LIMIT_F64);
        let below = self.b.ins().fcmp(FloatCC::LessThan, f, minus_limit);
        let whole = self.b.ins().trunc(f);
        // Saturating: in range whenever it is used (not above, not below, not NaN).
        let whole_int = self.b.ins().fcvt_to_sint_sat(types::I64, whole);
        let fraction = self.b.ins().fsub(f, whole);
        let zero = self.b.ins().f64const(0.0);
        let fraction_up = self.b.ins().fcmp(FloatCC::GreaterThan, fraction, zero);
        let fraction_down = self.b.ins().fcmp(FloatCC::LessThan, fraction, zero);
        let lt = self.b.ins().icmp(IntCC::SignedLessThan, i, whole_int);
        let gt = self.b.ins().icmp(IntCC::SignedGreaterThan, i, whole_int);
        let same = self.b.ins().icmp(IntCC::Equal, i, whole_int);
        let out_of_range = self.b.ins().bor(above, below);
        let out_of_range = self.b.ins().bor(out_of_range, nan);
        let in_range = self.b.ins().bxor_imm_u(out_of_range, 1);
        // i < f: f is above every integer, or (in range) i's whole part is less, or equal
        // with f's fraction above it.
        let tie_less = self.b.ins().band(same, fraction_up);
        let less = self.b.ins().bor(lt, tie_less);
        let less = self.b.ins().band(less, in_range);
        let less = self.b.ins().bor(less, above);
        let tie_greater = self.b.ins().band(same, fraction_down);
        let greater = self.b.ins().bor(gt, tie_greater);
        let greater = self.b.ins().band(greater, in_range);
        let greater = self.b.ins().bor(greater, below);
        let ordered = self.b.ins().bxor_imm_u(nan, 1);
        let unequal = self.b.ins().bor(less, greater);
        let not_unequal = self.b.ins().bxor_imm_u(unequal, 1);
        let equal = self.b.ins().band(not_unequal, ordered);
        match op {
            ComparisonOp::Eq => equal,
            ComparisonOp::NotEq => self.b.ins().bxor_imm_u(equal, 1),
            ComparisonOp::Lt => less,
            ComparisonOp::Gt => greater,
            ComparisonOp::Le => self.b.ins().bor(less, equal),
            ComparisonOp::Ge => self.b.ins().bor(greater, equal),
        }
    }

    /// `a STARTS WITH b` on two strings: b's length at most a's and a's first bytes b's. Null
    /// when either side is null (a string predicate on another type is null too, in the row
    /// evaluator; not compiled here).
    fn starts_with(&mut self, a: Val, b: Val) -> Result<Val, Unsupported> {
        match (a.ty, b.ty) {
            (ColumnType::Null, _) | (_, ColumnType::Null) => Ok(self.null()),
            (ColumnType::Str, ColumnType::Str) => {
                let (a_len, b_len) = (string_len(a)?, string_len(b)?);
                let fits = self
                    .b
                    .ins()
                    .icmp(IntCC::UnsignedLessThanOrEqual, b_len, a_len);
                let value = self.same_prefix_if(fits, a.value, b.value, b_len);
                let valid = self.b.ins().band(a.valid, b.valid);
                Ok(self.bool_val(value, valid))
            }
            _ => Err(Unsupported::new("STARTS WITH on a non-string")),
        }
    }

    /// 1 if two strings hold the same bytes (lengths equal, then the bytes).
    fn same_bytes(&mut self, a: Val, b: Val) -> Result<Ir, Unsupported> {
        let (a_len, b_len) = (string_len(a)?, string_len(b)?);
        let same_len = self.b.ins().icmp(IntCC::Equal, a_len, b_len);
        Ok(self.same_prefix_if(same_len, a.value, b.value, a_len))
    }

    /// 1 if `condition` holds and the first `n` bytes at `x` and `y` are equal; the bytes
    /// are only read where `condition` holds (`n` both strings have, by the caller's test).
    fn same_prefix_if(&mut self, condition: Ir, x: Ir, y: Ir, n: Ir) -> Ir {
        let zero = self.b.ins().iconst(types::I64, 0);
        let n = self.b.ins().select(condition, n, zero);
        let prefix = self.equal_prefix(x, y, n);
        self.b.ins().band(condition, prefix)
    }

    /// 1 if the `n` bytes at `x` and `y` are equal: a loop over the bytes (its own blocks;
    /// code after it goes on in the block it ends in).
    fn equal_prefix(&mut self, x: Ir, y: Ir, n: Ir) -> Ir {
        let i = self.b.declare_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(i, zero);
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let at = self.b.use_var(i);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, at, n);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let at = self.b.use_var(i);
        let flags = MemFlagsData::trusted();
        let xa = self.b.ins().iadd(x, at);
        let ya = self.b.ins().iadd(y, at);
        let xb = self.b.ins().load(types::I8, flags, xa, 0);
        let yb = self.b.ins().load(types::I8, flags, ya, 0);
        let same = self.b.ins().icmp(IntCC::Equal, xb, yb);
        let next = self.b.ins().iadd_imm_u(at, 1);
        // Past a difference `i` stays at it (< n): the answer is `i == n`.
        let advanced = self.b.ins().select(same, next, at);
        self.b.def_var(i, advanced);
        self.b.ins().brif(same, head, &[], done, &[]);
        self.b.switch_to_block(done);
        let at = self.b.use_var(i);
        self.b.ins().icmp(IntCC::Equal, at, n)
    }

    /// AND (`and`) or OR under three-valued logic: false wins an AND and true an OR, even
    /// against null.
    fn kleene(&mut self, and: bool, a: Val, b: Val) -> Val {
        let truth = |g: &mut Self, v: Val| {
            let t = g.b.ins().band(v.valid, v.value);
            let not = g.b.ins().bxor_imm_u(v.value, 1);
            let f = g.b.ins().band(v.valid, not);
            (t, f)
        };
        let (at, af) = truth(self, a);
        let (bt, bf) = truth(self, b);
        if and {
            let value = self.b.ins().band(at, bt);
            let either_false = self.b.ins().bor(af, bf);
            let valid = self.b.ins().bor(value, either_false);
            self.bool_val(value, valid)
        } else {
            let value = self.b.ins().bor(at, bt);
            let both_false = self.b.ins().band(af, bf);
            let valid = self.b.ins().bor(value, both_false);
            self.bool_val(value, valid)
        }
    }

    /// `item IN [candidates]`: true if some candidate equals it; else null if the item is
    /// null or some candidate is (and the list is not empty); else false. Which candidates
    /// can equal an item of its type is decided here, exactly as `equals` decides it.
    fn in_list(&mut self, item: Val, candidates: &[&Value]) -> Result<Val, Unsupported> {
        if item.ty == ColumnType::Str {
            return Err(Unsupported::new("IN with a string item"));
        }
        let unknown = candidates.iter().any(|c| c.is_null());
        let mut any = self.i8(0);
        for candidate in candidates {
            let hit = match (item.ty, candidate) {
                (ColumnType::Int, Value::Int(c)) => {
                    Some(self.b.ins().icmp_imm_s(IntCC::Equal, item.value, *c))
                }
                (ColumnType::Int, Value::Float(f)) => {
                    exact_int(*f).map(|c| self.b.ins().icmp_imm_s(IntCC::Equal, item.value, c))
                }
                (ColumnType::Float, Value::Float(f)) => {
                    let c = self.b.ins().f64const(*f);
                    Some(self.b.ins().fcmp(FloatCC::Equal, item.value, c))
                }
                (ColumnType::Float, Value::Int(c)) => exact_float(*c).map(|f| {
                    let c = self.b.ins().f64const(f);
                    self.b.ins().fcmp(FloatCC::Equal, item.value, c)
                }),
                (ColumnType::Bool, Value::Bool(c)) => Some(self.b.ins().icmp_imm_s(
                    IntCC::Equal,
                    item.value,
                    i64::from(*c),
                )),
                // Null candidates make the answer unknown (above); any other candidate never
                // equals a number or boolean.
                _ => None,
            };
            if let Some(hit) = hit {
                any = self.b.ins().bor(any, hit);
            }
        }
        if candidates.is_empty() {
            let (value, valid) = (self.i8(0), self.i8(1));
            return Ok(self.bool_val(value, valid));
        }
        let value = self.b.ins().band(any, item.valid);
        let valid = if unknown { value } else { item.valid };
        Ok(self.bool_val(value, valid))
    }
}

/// A string value's length (every STRING `Val` carries one).
fn string_len(v: Val) -> Result<Ir, Unsupported> {
    v.len
        .ok_or_else(|| Unsupported::new("code generation: a string without its length"))
}

/// 2^63 as a float: from here up floats exceed every `i64`, below its negation undercut it.
const I64_LIMIT_F64: f64 = 9_223_372_036_854_775_808.0;

/// The integer a float equals exactly under Cypher's integer/float equality, if any.
fn exact_int(f: f64) -> Option<i64> {
    (f.is_finite() && f.trunc() == f && (-I64_LIMIT_F64..I64_LIMIT_F64).contains(&f))
        .then_some(f as i64)
}

/// The float an integer equals exactly, if any (no float equals an integer it would round).
fn exact_float(i: i64) -> Option<f64> {
    let f = i as f64;
    ((-I64_LIMIT_F64..I64_LIMIT_F64).contains(&f) && f as i64 == i).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_conversions_match_the_value_rules() {
        assert_eq!(exact_int(3.0), Some(3));
        assert_eq!(exact_int(-0.0), Some(0));
        assert_eq!(exact_int(3.5), None);
        assert_eq!(exact_int(f64::NAN), None);
        assert_eq!(exact_int(I64_LIMIT_F64), None);
        assert_eq!(exact_int(-I64_LIMIT_F64), Some(i64::MIN));
        assert_eq!(exact_float(i64::MAX), None);
        assert_eq!(exact_float(i64::MIN), Some(-I64_LIMIT_F64));
        assert_eq!(exact_float((1 << 53) + 1), None);
        assert_eq!(exact_float(1 << 53), Some((1u64 << 53) as f64));
    }

    #[test]
    fn bits_pack_one_per_byte() {
        for len in [0, 1, 7, 8, 9, 63, 64, 65, 130, 2048] {
            // Every byte value, in every position of a word.
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + i / 9) as u8).collect();
            let packed = bits(&bytes);
            assert_eq!(packed.len(), len);
            let expected: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
            assert_eq!(packed.iter().collect::<Vec<_>>(), expected, "{len}");
        }
    }
}
