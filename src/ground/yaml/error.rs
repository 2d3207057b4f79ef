//! An error of reading YAML: a message and, when known, where (line and column, 1-based).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub message: String,
    /// 0 when the position is not known.
    pub line: u32,
    pub col: u32,
}

impl Error {
    pub fn at(message: impl Into<String>, line: u32, col: u32) -> Self {
        Error {
            message: message.into(),
            line,
            col,
        }
    }

    /// Where the error is, when known.
    pub fn location(&self) -> Option<(u32, u32)> {
        (self.line > 0).then_some((self.line, self.col))
    }

    /// The error, placed at `line:col` unless a node inside placed it already (the
    /// innermost node a mistake is found in is where it is).
    pub(super) fn or_at(mut self, line: u32, col: u32) -> Self {
        if self.line == 0 {
            self.line = line;
            self.col = col;
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location() {
            Some((line, col)) => write!(f, "{} at line {line}, column {col}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error::at(message.to_string(), 0, 0)
    }
}
