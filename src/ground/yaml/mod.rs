//! The one YAML front end, at the ground floor: reading with positions (serde-saphyr's
//! `Spanned`, kept per node in [`value::At`] and [`value::TValue`]) and errors rewritten
//! for people ([`read`]), and writing scalars that read back as the same string
//! ([`write`]). Scenarios, packs, config, baselines and contract rules all read through
//! [`parse`]; init and baselines write through [`write`].

pub mod read;
pub mod recover;
pub mod value;
pub mod write;

pub use read::parse;
pub use value::{At, TKind, TValue};
