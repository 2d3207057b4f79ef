//! `mcpspec record`: a proxy between a real client and the server that forwards every byte
//! unchanged and writes the session to a tape, one JSON line per message, as it happens.
//!
//! The tape is streamed to disk (memory stays bounded however long the session) and is
//! scrubbed before a byte is written: a value of a credential-named environment variable
//! becomes `<param:NAME>` (later a `{{ NAME }}` parameter of the scenarios), anything
//! secret-shaped becomes `***`. Its last line says how the session ended, so a server that
//! crashed leaves everything up to the crash, marked as such.

pub mod http;
pub mod replay;
pub mod stdio;
pub mod tape;

pub use tape::{End, Entry, From, Scrubber, TapeWriter, read_tape};
