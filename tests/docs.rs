//! The README documents every built-in check, generated from the packs.

mod common;

/// The README block between `<!-- MARKER:begin -->` and `<!-- MARKER:end -->` is exactly
/// the output of `mcpspec list PACKS --markdown`.
fn assert_generated_block(marker: &str, packs: &[&str]) {
    let mut args = vec!["list"];
    args.extend_from_slice(packs);
    args.push("--markdown");
    let r = common::run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let begin = format!("<!-- {marker}:begin -->\n");
    let start = readme
        .find(&begin)
        .unwrap_or_else(|| panic!("README has the {marker}:begin marker"))
        + begin.len();
    let end = readme
        .find(&format!("<!-- {marker}:end -->"))
        .unwrap_or_else(|| panic!("README has the {marker}:end marker"));
    assert!(
        readme[start..end] == r.stdout,
        "the README's {marker} block is stale: replace it with the output of `mcpspec {}`",
        args.join(" ")
    );
}

#[test]
fn readme_check_tables_are_generated_from_the_packs() {
    assert_generated_block("checks", &["conformance", "cross-era"]);
}

#[test]
fn readme_security_check_table_is_generated_from_the_pack() {
    assert_generated_block("security-checks", &["security"]);
}
