//! The README documents every built-in check, generated from the packs.

mod common;

#[test]
fn readme_check_tables_are_generated_from_the_packs() {
    let r = common::run(&["list", "conformance", "cross-era", "--markdown"]);
    assert_eq!(r.code, 0, "{r:?}");
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let start = readme
        .find("<!-- checks:begin -->\n")
        .expect("README has the checks:begin marker")
        + "<!-- checks:begin -->\n".len();
    let end = readme
        .find("<!-- checks:end -->")
        .expect("README has the checks:end marker");
    assert!(
        readme[start..end] == r.stdout,
        "the README's check tables are stale: replace the block between the markers with the output of `mcpspec list conformance cross-era --markdown`"
    );
}

#[test]
fn readme_security_table_is_generated_from_the_pack() {
    let r = common::run(&["list", "security", "--markdown"]);
    assert_eq!(r.code, 0, "{r:?}");
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let begin = "<!-- security-checks:begin -->\n";
    let start = readme
        .find(begin)
        .expect("README has the security-checks:begin marker")
        + begin.len();
    let end = readme
        .find("<!-- security-checks:end -->")
        .expect("README has the security-checks:end marker");
    assert!(
        readme[start..end] == r.stdout,
        "the README's security table is stale: replace the block between the markers with the output of `mcpspec list security --markdown`"
    );
}
