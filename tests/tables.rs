//! The reader of the tests' data tables (`tests/common/table.rs`): a well-formed table gives
//! its rows; every malformed one is refused with the `file:line` and what was expected.

mod common;

use common::table::{Row, parse};

const COLUMNS: &[&str] = &["defect", "check", "status"];

fn error(text: &'static str) -> String {
    parse("t.tsv", text, COLUMNS).expect_err("a malformed table is refused")
}

/// The panic message of `f` (the row helpers fail the test by panicking).
fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(f).expect_err("it fails the test");
    payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_else(|| format!("{payload:?}"))
}

#[test]
fn comments_blank_lines_aligned_tabs_and_empty_cells() {
    let rows: Vec<Row> = parse(
        "t.tsv",
        "# a comment\n\ndefect\tcheck\tstatus\n  # an indented comment\n\
         a\t\t\ts:one\tfailed\nb\ts:two\t-\r\n",
        COLUMNS,
    )
    .expect("well-formed");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].at, "t.tsv:5");
    assert_eq!(
        [rows[0].get("defect"), rows[0].get("check")],
        ["a", "s:one"]
    );
    assert_eq!(rows[1].at, "t.tsv:6");
    assert_eq!(rows[1].get("status"), "", "`-` is an empty cell");
    assert_eq!(rows[0].pick("status", &[("failed", 1), ("warning", 2)]), 1);
    assert_eq!(rows[0].one_of("status", &["warning", "failed"]), "failed");
}

#[test]
fn a_row_with_too_few_or_too_many_cells_is_refused_at_its_line() {
    assert_eq!(
        error("defect\tcheck\tstatus\na\ts:one\tfailed\nb s:two\tfailed\n"),
        "t.tsv:3: expected 3 cells separated by tabs (defect, check, status), got 2: \"b s:two\\tfailed\""
    );
    assert!(
        error("defect\tcheck\tstatus\na\ts:one\tfailed\tmore\n").starts_with(
            "t.tsv:2: expected 3 cells separated by tabs (defect, check, status), got 4"
        ),
    );
}

#[test]
fn a_wrong_or_missing_header_is_refused() {
    assert_eq!(
        error("# cases\ndefect\tstatus\tcheck\na\tfailed\ts:one\n"),
        "t.tsv:2: expected the header `defect\\tcheck\\tstatus` (column names separated by tabs), got \"defect\\tstatus\\tcheck\""
    );
    assert_eq!(
        error("# only comments\n\n"),
        "t.tsv: no header line (expected `defect\\tcheck\\tstatus`)"
    );
    assert_eq!(
        error("defect\tcheck\tstatus\n# no row\n"),
        "t.tsv: the table has no row"
    );
}

#[test]
fn spaces_around_a_cell_are_refused() {
    assert_eq!(
        error("defect\tcheck\tstatus\na\ts:one \tfailed\n"),
        "t.tsv:2: the cell \"s:one \" has spaces around it (cells are separated by tabs): \"a\\ts:one \\tfailed\""
    );
}

#[test]
fn a_value_outside_its_choices_or_an_unknown_column_fails_at_the_row() {
    let rows = parse(
        "t.tsv",
        "defect\tcheck\tstatus\na\ts:one\tfailde\n",
        COLUMNS,
    )
    .unwrap();
    let row = &rows[0];
    assert_eq!(
        panic_message(|| {
            row.one_of("status", &["failed", "warning"]);
        }),
        "t.tsv:2: `status` is `failde`, expected one of: failed, warning"
    );
    assert_eq!(
        panic_message(|| {
            row.get("era");
        }),
        "t.tsv:2: the test reads a column `era` the table does not have (defect, check, status)"
    );
}
