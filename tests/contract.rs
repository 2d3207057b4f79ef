//! Contract snapshots and diffs against the live example server: one "next release"
//! flag per change kind, each classified exactly; delivery-only changes give nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

use common::{mcpspec, read_json, run, run_in, stdio_target, table};
use serde_json::Value;

/// (list, name, kind, path, breaksClients) of every change a flag must produce.
type Expected = Vec<(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
)>;

/// Every `--change` flag of the example server and its exact classification, in the order
/// of `tests/contract/changes.tsv` (one row per change; a flag's rows are together).
static CASES: LazyLock<Vec<(&str, Expected)>> = LazyLock::new(|| {
    let columns = &["change", "list", "name", "kind", "path", "breaks"];
    let mut cases: Vec<(&str, Expected)> = Vec::new();
    for row in table::read("tests/contract/changes.tsv", columns) {
        let flag = row.get("change");
        let change = (
            row.one_of(
                "list",
                &[
                    "tools",
                    "prompts",
                    "resources",
                    "resource-templates",
                    "server",
                ],
            ),
            row.get("name"),
            row.get("kind"),
            row.get("path"),
            row.one_of("breaks", &["true", "false", "unknown"]),
        );
        match cases.iter().position(|(f, _)| *f == flag) {
            Some(i) if i + 1 == cases.len() => cases[i].1.push(change),
            Some(_) => row.fail(format!(
                "`{flag}` has rows further up: keep the rows of a flag together"
            )),
            None => cases.push((flag, vec![change])),
        }
    }
    cases
});

fn snapshot(dir: &Path, name: &str, flags: &[&str], era: &str) -> PathBuf {
    let out = dir.join(name);
    let r = run(&[
        "snapshot",
        "--stdio",
        &stdio_target(flags),
        "--era",
        era,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "snapshot {name} {flags:?}: {r:?}");
    out
}

fn diff_json(base: &Path, cand: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "diff",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let r = run(&args);
    let v: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("diff JSON: {e}\n{r:?}"));
    (r.code, v)
}

fn classification(v: &Value) -> Vec<(String, String, String, String, String)> {
    v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let b = match &c["breaksClients"] {
                Value::Bool(b) => b.to_string(),
                other => other.as_str().unwrap_or("?").to_string(),
            };
            (
                c["list"].as_str().unwrap().to_string(),
                c["name"].as_str().unwrap().to_string(),
                c["kind"].as_str().unwrap().to_string(),
                c["path"].as_str().unwrap_or("").to_string(),
                b,
            )
        })
        .collect()
}

/// Flags that narrow a parameter's type: the reference's summary says a narrowed type
/// breaks clients and affects models (Yes / Yes), whatever keyword narrows it.
const NARROWED_INPUT: &[&str] = &[
    "add-enum",
    "shrink-enum",
    "change-type",
    "add-maximum",
    "raise-minimum",
    "add-max-length",
    "add-pattern",
    "add-format",
    "close-additional-properties",
    "add-const",
];

/// Why a change's classification disagrees with the change-kind table, if it does.
fn table_disagrees(change: &Value) -> Option<String> {
    let text = |v: &Value| match v {
        Value::Bool(b) => b.to_string(),
        other => other.as_str().unwrap_or("?").to_string(),
    };
    let list = change["list"].as_str().unwrap();
    let kind = change["kind"].as_str().unwrap();
    let path = change["path"].as_str().unwrap_or("");
    let direction = ["input", "output"]
        .into_iter()
        .find(|d| path.starts_with(&format!("{d}Schema")));
    let rows = common::change_kind_table();
    let candidates: Vec<_> = rows
        .iter()
        .filter(|r| r.kinds.iter().any(|k| k == kind))
        .filter(|r| r.direction.is_none() || r.direction.as_deref() == direction)
        .collect();
    let row = match candidates.len() {
        0 => {
            return Some(format!(
                "{list} `{kind}` ({path}) is not in the change-kind table (docs/src/contracts.md)"
            ));
        }
        1 => candidates[0],
        _ => candidates
            .iter()
            .find(|r| r.lists.iter().any(|l| l == list || l == "any"))
            .copied()
            .unwrap_or(candidates[0]),
    };
    let got = (
        text(&change["breaksClients"]),
        text(&change["affectsModels"]),
    );
    (got != (row.breaks.clone(), row.models.clone())).then(|| {
        format!(
            "{list} `{kind}` ({path}): the diff says {got:?}, the change-kind table (docs/src/contracts.md) ({:?}, {:?})",
            row.breaks, row.models
        )
    })
}

#[test]
fn every_change_kind_is_classified_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let base = snapshot(dir.path(), "base", &[], "2026-07-28");
    let mut mismatches = Vec::new();
    for (flag, expected) in CASES.iter() {
        let cand = snapshot(dir.path(), flag, &["--change", flag], "2026-07-28");
        let (code, v) = diff_json(&base, &cand, &[]);
        for change in v["changes"].as_array().unwrap() {
            mismatches.extend(table_disagrees(change).map(|why| format!("--change {flag}: {why}")));
            if NARROWED_INPUT.contains(flag) && change["affectsModels"] != Value::Bool(true) {
                mismatches.push(format!(
                    "--change {flag}: a narrowed parameter type affects models, got {}",
                    change["affectsModels"]
                ));
            }
        }
        let got = classification(&v);
        let want: Vec<_> = expected
            .iter()
            .map(|(l, n, k, p, b)| {
                (
                    l.to_string(),
                    n.to_string(),
                    k.to_string(),
                    p.to_string(),
                    b.to_string(),
                )
            })
            .collect();
        if got != want {
            mismatches.push(format!("--change {flag}:\n  want {want:?}\n  got  {got:?}"));
        }
        let breaking = want.iter().any(|c| c.4 == "true");
        assert_eq!(
            code,
            i32::from(breaking),
            "--change {flag}: exit code (breaking = {breaking})"
        );
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_flag_list_and_the_cases_agree() {
    let out = Command::new(common::example_server())
        .args(["--change", "nope"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    let flags: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let cases: Vec<&str> = CASES.iter().map(|(f, _)| *f).collect();
    assert_eq!(
        flags, cases,
        "every --change flag has a classification case"
    );
}

#[test]
fn delivery_only_changes_give_no_change() {
    let dir = tempfile::tempdir().unwrap();
    for era in ["2026-07-28", "legacy"] {
        let base = snapshot(dir.path(), &format!("base-{era}"), &[], era);
        for (i, flags) in [
            &["--page-size", "1"][..],
            &["--page-size", "4", "--reverse-order"],
            &["--ttl-ms", "5"],
            &["--reverse-order", "--ttl-ms", "0", "--page-size", "2"],
        ]
        .iter()
        .enumerate()
        {
            let cand = snapshot(dir.path(), &format!("cand-{era}-{i}"), flags, era);
            let (code, v) = diff_json(&base, &cand, &[]);
            assert_eq!(code, 0, "{flags:?} ({era})");
            assert_eq!(
                v["changes"],
                Value::Array(vec![]),
                "{flags:?} ({era}) must not change the contract"
            );
            for file in [
                "tools.json",
                "resources.json",
                "resource-templates.json",
                "prompts.json",
                "server.json",
            ] {
                assert_eq!(
                    std::fs::read(base.join(file)).unwrap(),
                    std::fs::read(cand.join(file)).unwrap(),
                    "{file} differs for {flags:?} ({era})"
                );
            }
        }
    }
}

#[test]
fn snapshots_are_byte_identical_for_the_same_server_state() {
    let dir = tempfile::tempdir().unwrap();
    let take = |name: &str| {
        let out = dir.path().join(name);
        let r = run_in(
            &common::repo_root(),
            &[
                "snapshot",
                "--stdio",
                &stdio_target(&["--page-size", "3"]),
                "--era",
                "2026-07-28",
                "--out",
                out.to_str().unwrap(),
            ],
            &[("SOURCE_DATE_EPOCH", "1700000000")],
        );
        assert_eq!(r.code, 0, "{r:?}");
        out
    };
    let (a, b) = (take("a"), take("b"));
    for file in [
        "tools.json",
        "resources.json",
        "resource-templates.json",
        "prompts.json",
        "server.json",
        "snapshot.json",
    ] {
        let (x, y) = (
            std::fs::read(a.join(file)).unwrap(),
            std::fs::read(b.join(file)).unwrap(),
        );
        assert!(!x.is_empty(), "{file} is empty");
        assert_eq!(x, y, "{file} is not byte-identical");
    }
    let meta = read_json(&a.join("snapshot.json"));
    assert_eq!(meta["takenAt"], "2023-11-14T22:13:20Z");
    assert_eq!(meta["era"], "modern");
    assert_eq!(meta["server"]["name"], "mcpspec-example-server");
    // Normalized: sorted by name, delivery fields dropped, keys sorted.
    let tools = read_json(&a.join("tools.json"));
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let text = std::fs::read_to_string(a.join("tools.json")).unwrap();
    for dropped in ["nextCursor", "ttlMs", "cacheScope", "resultType", "_meta"] {
        assert!(
            !text.contains(dropped),
            "{dropped} must not be in a snapshot"
        );
    }
}

#[test]
fn profiles_write_their_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "snapshot",
        "--stdio",
        &stdio_target(&[]),
        "--era",
        "legacy",
        "--profile",
        "admin",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let meta = read_json(&dir.path().join("admin/snapshot.json"));
    assert_eq!(meta["profile"], "admin");
    assert_eq!(meta["era"], "legacy");
}

const RULES_ACCEPT: &str = r#"
fail: [breaking]
accept:
  - list: tools
    name: divide
    kind: removed
    reason: divide moved to the calculator server in 2.0
"#;

/// Snapshots of the example server as it is and with a tool removed and a description
/// changed (`base`, `cand`), in a fresh folder.
fn removed_and_redescribed() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = snapshot(dir.path(), "base", &[], "2026-07-28");
    let cand = snapshot(
        dir.path(),
        "cand",
        &["--change", "remove-tool", "--change", "change-description"],
        "2026-07-28",
    );
    (dir, base, cand)
}

#[test]
fn rules_accept_fail_and_report_stale_entries() {
    let (dir, base, cand) = removed_and_redescribed();
    let rules = dir.path().join("rules.yaml");

    // Accepted breaking change: exit 0, verdict accepted with its reason.
    std::fs::write(&rules, RULES_ACCEPT).unwrap();
    let (code, v) = diff_json(&base, &cand, &["--rules", rules.to_str().unwrap()]);
    assert_eq!(code, 0, "{v:#}");
    let removed = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "removed")
        .unwrap();
    assert_eq!(removed["verdict"], "accepted");
    assert_eq!(
        removed["acceptedReason"],
        "divide moved to the calculator server in 2.0"
    );
    assert_eq!(
        v["modelReview"].as_array().unwrap().len(),
        2,
        "removed + description_changed affect models"
    );

    // A description change fails when the rules say so.
    std::fs::write(
        &rules,
        format!("{RULES_ACCEPT}\nignore: []\n")
            .replace("fail: [breaking]", "fail: [breaking, description_changed]"),
    )
    .unwrap();
    let (code, _) = diff_json(&base, &cand, &["--rules", rules.to_str().unwrap()]);
    assert_eq!(code, 1);

    // The same acceptance against a server without the change is stale: exit 1, with its line.
    std::fs::write(&rules, RULES_ACCEPT).unwrap();
    let (code, v) = diff_json(&base, &base, &["--rules", rules.to_str().unwrap()]);
    assert_eq!(code, 1);
    let stale = v["stale"].as_array().unwrap();
    assert_eq!(stale.len(), 1);
    assert!(
        stale[0].as_str().unwrap().contains("rules.yaml:4:5"),
        "{stale:?}"
    );
    assert!(
        stale[0].as_str().unwrap().contains("no longer occurs"),
        "{stale:?}"
    );

    // An expired acceptance no longer applies.
    std::fs::write(&rules, format!("{RULES_ACCEPT}    expires: 2020-01-01\n")).unwrap();
    let (code, v) = diff_json(&base, &cand, &["--rules", rules.to_str().unwrap()]);
    assert_eq!(code, 1);
    let removed = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "removed")
        .unwrap();
    assert_eq!(removed["verdict"], "fail");
    assert!(
        removed["note"]
            .as_str()
            .unwrap()
            .contains("expired on 2020-01-01")
    );

    // `ignore` leaves kinds out; `any` fails on everything else.
    std::fs::write(
        &rules,
        "fail: [any]\nignore: [description_changed, removed]\n",
    )
    .unwrap();
    let (code, v) = diff_json(&base, &cand, &["--rules", rules.to_str().unwrap()]);
    assert_eq!((code, v["changes"].as_array().unwrap().len()), (0, 0));
}

#[test]
fn text_and_junit_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let base = snapshot(dir.path(), "base", &[], "2026-07-28");
    let cand = snapshot(
        dir.path(),
        "cand",
        &[
            "--change",
            "add-required-param",
            "--change",
            "add-tool",
            "--change",
            "add-oneof",
        ],
        "2026-07-28",
    );
    let junit = dir.path().join("diff.xml");
    let r = run(&[
        "diff",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let fail_at = r.stdout.find("FAIL").expect("a FAIL group");
    let review_at = r
        .stdout
        .find("REVIEW")
        .expect("a REVIEW group for the oneOf change");
    let other_at = r.stdout.find("OTHER").expect("an OTHER group");
    assert!(
        fail_at < review_at && review_at < other_at,
        "breaking first:\n{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "tools/get_weather  required_parameter_added  at inputSchema.properties.country"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("RE-EVALUATE WITH MODELS"), "{}", r.stdout);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(xml.contains("type=\"required_parameter_added\""), "{xml}");
    assert_eq!(xml.matches("<testcase").count(), 3, "{xml}");
    common::assert_valid_junit(&junit);
}

#[test]
fn bad_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let base = snapshot(dir.path(), "base", &[], "2026-07-28");
    let r = run(&["diff", base.to_str().unwrap(), "/nonexistent/snapshot"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("not a snapshot folder"), "{r:?}");
    std::fs::write(base.join("tools.json"), "{not json").unwrap();
    let r = run(&["diff", base.to_str().unwrap(), base.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("tools.json: not valid JSON"), "{r:?}");
    let good = snapshot(dir.path(), "good", &[], "2026-07-28");
    let rules = dir.path().join("rules.yaml");
    std::fs::write(
        &rules,
        "fail: [breaking, removd]\naccept:\n  - {list: tool, name: x, kind: removed, reason: ''}\n",
    )
    .unwrap();
    let r = run(&[
        "diff",
        good.to_str().unwrap(),
        good.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    for needle in [
        "unknown change kind `removd`",
        "did you mean `removed`",
        "unknown list `tool`",
        "needs a reason",
        "rules.yaml:1:18",
        "rules.yaml:3:12",
    ] {
        assert!(
            r.stderr.contains(needle),
            "missing {needle:?} in:\n{}",
            r.stderr
        );
    }
}

// A `contract` step in a scenario passes and fails: tests/cases/contract-step-passes-and-fails/.

/// A contract step names its rules file, read when the scenario loads: a missing or
/// malformed file stops the run before it starts (exit 2) at the step's line, a malformed
/// one with the rules file's own position too; a valid one decides the verdict.
#[test]
fn a_contract_steps_rules_file_is_read_when_the_scenario_loads() {
    let dir = tempfile::tempdir().unwrap();
    snapshot(dir.path(), "baseline", &[], "2026-07-28");
    let scenario = dir.path().join("contract.yaml");
    std::fs::write(
        &scenario,
        "scenario: contract\nsteps:\n  - name: no breaking change\n    contract: { baseline: baseline, rules: rules.yaml }\n",
    )
    .unwrap();
    let s = scenario.to_str().unwrap();
    let changed = stdio_target(&["--change", "remove-tool"]);
    let json = dir.path().join("r.json");
    let args = [
        "run",
        s,
        "--stdio",
        &changed,
        "--era",
        "2026-07-28",
        "--json",
        json.to_str().unwrap(),
    ];

    let r = run(&args);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("contract.yaml:4:") && r.stderr.contains("cannot read"),
        "{r:?}"
    );

    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, "fail: [no_such_kind]\n").unwrap();
    let r = run(&args);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("rules.yaml:1:")
            && r.stderr.contains("contract.yaml:4:")
            && r.stderr.contains("no_such_kind"),
        "{r:?}"
    );

    std::fs::write(
        &rules,
        "accept:\n  - { list: tools, name: divide, kind: removed, reason: dropped on purpose }\n",
    )
    .unwrap();
    let r = run(&args);
    assert_eq!(r.code, 0, "the accepted removal passes: {r:?}");
}

/// A real-world case: two published releases of the npm reference server
/// `@modelcontextprotocol/server-everything`, far apart, with their dependency trees
/// pinned by package-lock.json (`.ci/run` installs them with `npm ci`).
#[test]
fn real_world_npm_server_releases() {
    let root = common::repo_root().join("tests/interop");
    let old = root.join(
        "everything-2025.4.8/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    let new = root.join(
        "everything-2026.8.31/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        old.exists() && new.exists(),
        "the pinned npm servers are not installed: run `npm ci` in tests/interop/everything-2025.4.8 and tests/interop/everything-2026.8.31 (.ci/run does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let take = |name: &str, cmd: String| {
        let out = dir.path().join(name);
        let r = run(&[
            "snapshot",
            "--stdio",
            &cmd,
            "--era",
            "legacy",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{r:?}");
        out
    };
    let a = take("old", format!("node {}", old.display()));
    let b = take("new", format!("node {} stdio", new.display()));
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    assert_eq!(v["baseline"], "old", "named after the snapshot folders");
    assert_eq!(v["candidate"], "new");
    let has = |list: &str, name: &str, kind: &str, breaks: bool| {
        v["changes"].as_array().unwrap().iter().any(|c| {
            c["list"] == list
                && c["name"] == name
                && c["kind"] == kind
                && c["breaksClients"] == breaks
        })
    };
    // Tools renamed to kebab-case: the old names are gone (breaking), the new ones are added.
    for t in [
        "add",
        "longRunningOperation",
        "printEnv",
        "sampleLLM",
        "getTinyImage",
    ] {
        assert!(has("tools", t, "removed", true), "tools/{t} removed");
    }
    for t in [
        "get-sum",
        "trigger-long-running-operation",
        "get-env",
        "get-tiny-image",
    ] {
        assert!(has("tools", t, "added", false), "tools/{t} added");
    }
    assert!(has("tools", "echo", "additional_properties_relaxed", false));
    assert!(has("tools", "echo", "description_changed", false));
    assert!(has("prompts", "simple_prompt", "removed", true));
    assert!(has(
        "resources",
        "test://static/resource/1",
        "removed",
        true
    ));
    assert!(has(
        "resource-templates",
        "test://static/resource/{id}",
        "removed",
        true
    ));
    // Both releases declare resources.subscribe (no change); the new one adds listChanged flags.
    assert!(
        !v["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "resources.subscribe"),
        "resources.subscribe is declared by both releases"
    );
    assert!(has(
        "server",
        "resources.listChanged",
        "capability_added",
        false
    ));
    assert!(has("server", "instructions", "instructions_changed", false));
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .contains("different revisions"),
        "{warnings:?}"
    );
    let _ = mcpspec();
}

/// `mcpspec diff --junit` names its testcases the same from run to run (#38): single
/// spaces, and no line of the rules file (a stale acceptance names its change, not its
/// position), so a CI's trend history survives an edit of the rules file.
#[test]
fn junit_testcase_names_are_stable_across_edits_of_the_rules_file() {
    let (dir, base, cand) = removed_and_redescribed();
    let rules = dir.path().join("rules.yaml");
    let stale_entry = "  - list: tools\n    name: gone\n    kind: removed\n    reason: long gone\n";
    let names = |prefix: &str| {
        std::fs::write(&rules, format!("{prefix}{RULES_ACCEPT}{stale_entry}")).unwrap();
        let junit = dir.path().join("diff.xml");
        let r = run(&[
            "diff",
            base.to_str().unwrap(),
            cand.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 1, "the stale entry fails: {r:?}");
        common::assert_valid_junit(&junit);
        let xml = std::fs::read_to_string(&junit).unwrap();
        let names: Vec<String> = regex::Regex::new(r#"<testcase name="([^"]*)""#)
            .unwrap()
            .captures_iter(&xml)
            .map(|c| c[1].to_string())
            .collect();
        assert!(names.len() >= 3, "{xml}");
        for name in &names {
            assert!(!name.contains("  "), "double space in {name:?}");
            assert!(!name.contains("rules.yaml"), "a position in {name:?}");
        }
        assert!(
            names.contains(&"stale acceptance: tools/gone removed".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"tools/divide removed".to_string()),
            "{names:?}"
        );
        names
    };
    let before = names("");
    let after = names("# the rules of the weather team\n\n\n");
    assert_eq!(before, after, "the names moved with the rules file's lines");
}
