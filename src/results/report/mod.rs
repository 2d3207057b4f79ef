//! Reports derived from the canonical result model ([`result::RunReport`]): a streaming
//! console view, JUnit XML and JSON. Every reporter redacts the secrets its caller passes in
//! from everything it writes.

pub mod console;
pub mod diff;
pub mod events;
pub mod html;
pub mod json;
pub mod junit;
pub mod page;
pub mod result;
pub mod sarif;
#[cfg(test)]
pub(crate) mod testdata;
pub mod transcript;
