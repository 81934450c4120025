//! The specifications of the loading and batching stages a plan may hold: what a `LoadCsv`
//! reads and where it puts it, and how a `CallInTransactions` batches its input.

use super::BExpr;
use plexus_cypher::ast::OnError;
use plexus_ingest::CsvOptions;
use plexus_value::value::Value;

/// What a `LoadCsv` operator reads and where it puts it.
#[derive(Debug, Clone)]
pub struct LoadCsvSpec {
    /// The clause's variable: a list per record, or a map with headers.
    pub slot: usize,
    pub with_headers: bool,
    pub options: CsvOptions,
    /// The record's 1-based line (`linenumber()`).
    pub line_slot: usize,
    /// The file's name relative to the import directory (`file()`).
    pub file_slot: usize,
}

/// Input rows per inner transaction when `OF n ROWS` is not given (as in Neo4j).
pub const DEFAULT_BATCH_ROWS: u64 = 1000;

/// What a `CallInTransactions` operator does besides running its inner plan.
#[derive(Debug, Clone)]
pub struct InTransactionsSpec {
    /// Input rows per inner transaction.
    pub batch: BatchRows,
    pub on_error: OnError,
    /// The inner plan's returned slots copied onto each output row (none for a unit subquery).
    pub returns: Vec<usize>,
    /// A unit subquery (no RETURN): each input row passes once, after its batch commits.
    pub unit: bool,
    /// `REPORT STATUS AS v`: the slot of `v`.
    pub status_slot: Option<usize>,
}

/// The batch size: known when planning, or a constant expression evaluated before the first
/// batch (see THE BATCH SIZE).
#[derive(Debug, Clone)]
pub enum BatchRows {
    Known(u64),
    /// `text` is the expression as written, for the error message.
    Evaluate {
        expr: BExpr,
        text: String,
    },
}

/// `value` as a batch size, or Neo4j 5's message naming `text` (the expression as written).
pub fn positive_batch_rows(value: &Value, text: &str) -> std::result::Result<u64, String> {
    match value {
        Value::Int(n) if *n >= 1 => Ok(*n as u64),
        _ => Err(format!(
            "Invalid input. '{text}' is not a valid value. Must be a positive integer."
        )),
    }
}
