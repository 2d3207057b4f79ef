//! Contract snapshots and their classified diff.
//!
//! A snapshot is the normalized result of the list methods of one server version (one
//! era, one authorization profile). A diff classifies every change between two
//! snapshots: does it break protocol clients, does it affect models. Rules decide which
//! changes fail a run and which are accepted.

pub mod diff;
pub mod output;
pub mod rules;
pub mod schema_diff;
pub mod snapshot;
pub mod xmcp;

pub use diff::{Change, DiffReport, diff_snapshots};
pub use snapshot::{Snapshot, take_snapshot};
