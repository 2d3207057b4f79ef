//! The reader of the tests' data tables (`tests/defects/*.tsv`, `tests/contract/changes.tsv`):
//! "seeded defect → check → expected outcome" rows kept as data, one row per line, so a
//! case is added by adding a line.
//!
//! The format: a line starting with `#` is a comment and a blank line is ignored; the first
//! other line is the header, the column names separated by tabs, exactly as the test names
//! them; every following line is one row of exactly that many cells separated by tabs (a run
//! of tabs counts as one, so columns may be aligned); a cell `-` is empty. There is no quoting
//! and no escape: a cell is its text. Anything else fails the test with the `file:line` and
//! what was expected — a row is never skipped.

use std::fmt::Display;

/// One row of a table: its cells by column name, and where it comes from.
#[derive(Debug)]
pub struct Row {
    /// `file:line`, for messages.
    pub at: String,
    columns: &'static [&'static str],
    cells: Vec<&'static str>,
}

impl Row {
    /// The cell of `column` (`""` for `-`).
    pub fn get(&self, column: &str) -> &'static str {
        match self.columns.iter().position(|c| *c == column) {
            Some(i) => self.cells[i],
            None => self.fail(format!(
                "the test reads a column `{column}` the table does not have ({})",
                self.columns.join(", ")
            )),
        }
    }

    /// The value the cell of `column` names among `choices` (`(cell text, value)`).
    pub fn pick<T: Copy>(&self, column: &str, choices: &[(&str, T)]) -> T {
        let cell = self.get(column);
        match choices.iter().find(|(name, _)| *name == cell) {
            Some((_, value)) => *value,
            None => {
                let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
                self.fail(format!(
                    "`{column}` is `{cell}`, expected one of: {}",
                    names.join(", ")
                ))
            }
        }
    }

    /// The cell of `column`, which must be one of `words`.
    pub fn one_of(&self, column: &str, words: &[&'static str]) -> &'static str {
        let choices: Vec<(&str, &'static str)> = words.iter().map(|w| (*w, *w)).collect();
        self.pick(column, &choices)
    }

    /// Fails the test at this row.
    pub fn fail(&self, why: impl Display) -> ! {
        panic!("{}: {why}", self.at)
    }
}

/// The rows of the table at `path` (relative to the repository root), whose header must be
/// `columns`; a malformed table fails the test. The text lives as long as the test process
/// (leaked once per table), so cells are `&'static str` like the const tables they replace.
pub fn read(path: &str, columns: &'static [&'static str]) -> Vec<Row> {
    let text = std::fs::read_to_string(super::repo_root().join(path))
        .unwrap_or_else(|e| panic!("cannot read the table {path}: {e}"));
    parse(path, String::leak(text), columns).unwrap_or_else(|e| panic!("{e}"))
}

/// The rows of the table at `path`, each made a `T` by `each` (the test's own case type).
pub fn read_as<T>(
    path: &str,
    columns: &'static [&'static str],
    each: impl Fn(&Row) -> T,
) -> Vec<T> {
    read(path, columns).iter().map(each).collect()
}

/// The rows of a table's `text` (`file` names it in messages), or what is wrong, at its line.
pub fn parse(
    file: &str,
    text: &'static str,
    columns: &'static [&'static str],
) -> Result<Vec<Row>, String> {
    let mut header = false;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", i + 1);
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let cells: Vec<&'static str> = line.split('\t').filter(|c| !c.is_empty()).collect();
        if !header {
            if cells != columns {
                return Err(format!(
                    "{at}: expected the header `{}` (column names separated by tabs), got {line:?}",
                    columns.join("\\t")
                ));
            }
            header = true;
            continue;
        }
        if cells.len() != columns.len() {
            return Err(format!(
                "{at}: expected {} cells separated by tabs ({}), got {}: {line:?}",
                columns.len(),
                columns.join(", "),
                cells.len()
            ));
        }
        if let Some(cell) = cells.iter().find(|c| c.trim() != **c) {
            return Err(format!(
                "{at}: the cell {cell:?} has spaces around it (cells are separated by tabs): {line:?}"
            ));
        }
        let cells = cells
            .into_iter()
            .map(|c| if c == "-" { "" } else { c })
            .collect();
        rows.push(Row { at, columns, cells });
    }
    if !header {
        return Err(format!(
            "{file}: no header line (expected `{}`)",
            columns.join("\\t")
        ));
    }
    if rows.is_empty() {
        return Err(format!("{file}: the table has no row"));
    }
    Ok(rows)
}
