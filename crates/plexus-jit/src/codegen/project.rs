//! Compiled projections: a Project's computed items, one loop writing typed columns.
//!
//! ```text
//! fn(columns: *const ColumnArg, params: *const ParamArg, len: u64,
//!    outputs: *const OutArg) -> u32                       // 0: written; 1: fall back
//! ```
//!
//! Per row, every item is evaluated in registers (the filter's code generator: `Gen`) and
//! its value and validity stored to its own output — 8 bytes per row for an INTEGER or a
//! FLOAT, one byte for a BOOLEAN, one validity byte; a null row's value is stored as 0. An
//! item of another type (a string, a null literal) is [`Unsupported`]. As for a filter, a
//! row on which any item would raise an error sets `fail`, and the caller runs the
//! interpreter on the whole batch. Rust packs the outputs into Arrow arrays ([`Computed`]).

use super::{
    Column, ColumnArg, ColumnType, CompiledCode, FloatCalls, Gen, Param, ParamArg, Signature, bits,
    load_inputs, row_loop,
};
use crate::shape::{Shape, Unsupported};
use arrow::array::{BooleanArray, Float64Array, Int64Array};
use arrow::buffer::{Buffer, NullBuffer, ScalarBuffer};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types};
use cranelift_frontend::FunctionBuilder;
use plexus_plan::logical::BExpr;
use plexus_value::value::Value;

pub(super) const PARAMS: &[Param] = &[Param::Pointer, Param::Pointer, Param::I64, Param::Pointer];

pub(super) type Entry =
    unsafe extern "C" fn(*const ColumnArg, *const ParamArg, u64, *const OutArg) -> u32;

/// One item's output buffers, as the code writes them.
#[repr(C)]
pub(super) struct OutArg {
    values: *mut u8,
    valid: *mut u8,
}

/// A computed item's column.
#[derive(Debug, Clone, PartialEq)]
pub enum Computed {
    Int(Int64Array),
    Float(Float64Array),
    Bool(BooleanArray),
}

impl CompiledCode {
    /// The items' columns over `len` rows, or `None`: not a Project's code, the columns or
    /// parameters are not of the signature's types, or some row would raise an error in
    /// some item (the caller runs the interpreter).
    pub fn run_project(
        &self,
        columns: &[Column],
        params: &[&Value],
        len: usize,
    ) -> Option<Vec<Computed>> {
        let super::Code::Project { entry, types } = &self.entry else {
            return None;
        };
        let arguments = super::Arguments::of(&self.signature, columns, params, len)?;
        let width = |ty: &ColumnType| if *ty == ColumnType::Bool { 1 } else { 8 };
        let mut values: Vec<Vec<u64>> = types
            .iter()
            .map(|ty| vec![0u64; (len * width(ty)).div_ceil(8)])
            .collect();
        let mut valid: Vec<Vec<u8>> = types.iter().map(|_| vec![0u8; len]).collect();
        let outputs: Vec<OutArg> = (values.iter_mut().zip(valid.iter_mut()))
            .map(|(values, valid)| OutArg {
                values: values.as_mut_ptr().cast(),
                valid: valid.as_mut_ptr(),
            })
            .collect();
        // SAFETY: the columns and parameters are of the signature's types and `len` rows long
        // (`Arguments::of`: see `run`); each item's code writes `len` values of its type's
        // width (8 bytes, or 1 for a BOOLEAN) into a buffer of at least that many bytes and
        // `len` validity bytes.
        let failed = unsafe {
            entry(
                arguments.columns.as_ptr(),
                arguments.params.as_ptr(),
                len as u64,
                outputs.as_ptr(),
            )
        };
        drop(arguments);
        if failed != 0 {
            return None;
        }
        let computed = (types.iter().zip(values).zip(valid))
            .map(|((ty, values), valid)| {
                let nulls = (!valid.iter().all(|&b| b != 0)).then(|| NullBuffer::new(bits(&valid)));
                match ty {
                    ColumnType::Int => {
                        let ints: Vec<i64> = values.into_iter().map(|v| v as i64).collect();
                        Computed::Int(Int64Array::new(ScalarBuffer::from(ints), nulls))
                    }
                    ColumnType::Float => {
                        let floats: Vec<f64> = values.into_iter().map(f64::from_bits).collect();
                        Computed::Float(Float64Array::new(ScalarBuffer::from(floats), nulls))
                    }
                    _ => {
                        let bytes = Buffer::from_vec(values);
                        Computed::Bool(BooleanArray::new(bits(&bytes.as_slice()[..len]), nulls))
                    }
                }
            })
            .collect();
        Some(computed)
    }
}

/// The Project's function (see the module docs); fills `types`. Returns the string
/// literals the code points into.
pub(super) fn emit(
    b: &mut FunctionBuilder,
    items: &[BExpr],
    (shape, signature, pointer, calls): (&Shape, &Signature, types::Type, FloatCalls),
    types: &mut Vec<ColumnType>,
) -> Result<Vec<Box<[u8]>>, Unsupported> {
    let flags = MemFlagsData::trusted();
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let &[columns, params, len, outputs] = b.block_params(entry) else {
        return Err(Unsupported::new("code generation: function parameters"));
    };
    let (leaves, param_values) = load_inputs(b, signature, pointer, columns, params);
    let mut buffers = Vec::with_capacity(items.len());
    for i in 0..items.len() {
        let at = i as i32 * 16;
        let values = b.ins().load(pointer, flags, outputs, at);
        let valid = b.ins().load(pointer, flags, outputs, at + 8);
        buffers.push((values, valid));
    }
    let fail = b.declare_var(types::I8);
    let zero = b.ins().iconst(types::I64, 0);
    let no = b.ins().iconst(types::I8, 0);
    b.def_var(fail, no);
    let exit = b.create_block();
    let (row, header, r) = row_loop(b, (zero, len), (exit, &[]));
    let inputs = (shape, (leaves, param_values));
    let mut g = Gen::new(b, inputs, (r, fail), (pointer, calls));
    for (item, (values, valid)) in items.iter().zip(&buffers) {
        let v = g.expr(item)?;
        let (value, width) = match v.ty {
            ColumnType::Int => {
                let zero = g.b.ins().iconst(types::I64, 0);
                (g.b.ins().select(v.valid, v.value, zero), 8)
            }
            ColumnType::Float => {
                let zero = g.b.ins().f64const(0.0);
                (g.b.ins().select(v.valid, v.value, zero), 8)
            }
            ColumnType::Bool => (g.b.ins().band(v.value, v.valid), 1),
            ColumnType::Str | ColumnType::Null => {
                return Err(Unsupported::new(format!(
                    "a projected {}",
                    if v.ty == ColumnType::Str {
                        "string"
                    } else {
                        "null"
                    }
                )));
            }
        };
        let offset = match width {
            8 => g.b.ins().ishl_imm_u(r, 3),
            _ => r,
        };
        let at = g.b.ins().iadd(*values, offset);
        g.b.ins().store(flags, value, at, 0);
        let at = g.b.ins().iadd(*valid, r);
        g.b.ins().store(flags, v.valid, at, 0);
        types.push(v.ty);
    }
    let (b, literals) = (g.b, g.literals);
    let next = b.ins().iadd_imm_u(r, 1);
    b.def_var(row, next);
    b.ins().jump(header, &[]);

    b.switch_to_block(exit);
    let failed = b.use_var(fail);
    let failed = b.ins().uextend(types::I32, failed);
    b.ins().return_(&[failed]);
    b.seal_all_blocks();
    Ok(literals)
}
