//! Plexus values: what Cypher expressions evaluate to, how they compare, how they print, and
//! the error every query stage reports.
//!
//! WHAT IS HERE
//! ============
//! - [`value`]: the Cypher [`Value`] (with [`MapValue`] and [`PathValue`]), its conversion to
//!   and from the stored property value, and its equality / comparison / ordering / grouping
//!   rules; the arithmetic operators ([`ArithOp`]);
//! - [`temporal`]: dates, times, datetimes and durations — representation, calendar and
//!   time zones, ISO 8601 text in and out, arithmetic on the types; it knows no `Value`;
//! - [`temporal_fns`]: Cypher's temporal functions over values — constructors (`date(...)`,
//!   `duration.between(...)`, the function table), `+ - * /` with temporal operands,
//!   components (`t.year`), `toString`;
//! - [`format`](mod@format): values as Cypher's `toString` writes them (`1.0E20`, `NaN`);
//! - [`error`]: [`QueryError`] with its openCypher class and detail code, [`Phase`] and
//!   source [`plexus_types::Span`].
//!
//! The modules use one another in one direction only, with no cycle: `error` uses none of
//! the others; `temporal` uses `error`; `value` uses `temporal` (a value holds a temporal or
//! a duration); `temporal_fns` uses `value` and `temporal`; `format` uses `value`.
//!
//! WHY A CRATE OF ITS OWN
//! ======================
//! Values cross every stage of a query: the binder folds constants, the planner estimates
//! with them, the executor moves them in batches, results carry them to the front ends. So
//! they, and the error every stage raises, sit below all stages and depend on nothing of the
//! engine — only on `plexus_types` (ids, stored property values, spans). Nothing here reads a
//! transaction or the system clock: a node is an id whose labels and properties the executor
//! reads, and "now" is a [`temporal::StatementClock`] the executor passes in.
//!
//! STORAGE VALUES VS CYPHER VALUES
//! ===============================
//! `plexus_types::Value` is what a property can hold. A Cypher value can also be a node, a
//! relationship or a path — held here by id only (`VertexId`, `EdgeId`); labels and
//! properties are read from the transaction when an expression asks for them, and copied into
//! the query result when a row leaves the engine.
//!
//! THREE WAYS TO COMPARE, ONE TO GROUP
//! ===================================
//! Cypher has three relations, and each has its own function in [`value`]:
//!
//! - **equality** ([`equals`]), ternary: `1 = 1.0` is true, `null = null` is null,
//!   `[1, null] = [1, 2]` is null, values of different kinds are unequal;
//! - **comparison** ([`compare`]) for `<`, `<=`, ...: defined only within numbers, strings,
//!   booleans, lists (lexicographically) and temporal values of one kind; anything else,
//!   and anything with null, is null;
//! - **orderability** ([`order`]) for `ORDER BY`, `min`, `max`: a total order over all values,
//!   `MAP < NODE < RELATIONSHIP < LIST < PATH < TEMPORAL < STRING < BOOLEAN < NUMBER < NULL`,
//!   with NaN above every other number.
//!
//! Grouping (`DISTINCT`, aggregation keys, `UNION`, hash-join keys) uses **equivalence**:
//! equality where `null ≡ null` and `NaN ≡ NaN` ([`GroupKey`]).
//!
//! INVARIANTS
//! ==========
//! - null propagates: `equals` and `compare` return `None` (Cypher null) when either side is
//!   null, or a list or map holds a null that decides the answer;
//! - `order` is total and consistent with `compare` where `compare` is defined;
//! - values that are equal (`=` is true) are equivalent and hash alike (the `GroupKey` hash
//!   agrees with `1 = 1.0` even for integers beyond 2^53); for values that [`can_be_equal`],
//!   equivalence is exactly `=`;
//! - integers and floats compare exactly (no rounding of large integers to `f64`).

pub mod error;
pub mod format;
pub mod temporal;
pub mod temporal_fns;
pub mod value;

pub use error::{ErrorClass, Phase, QueryError, Result};
pub use value::{
    ArithOp, GroupKey, MapValue, PathValue, Value, can_be_equal, compare, equals, order,
};
