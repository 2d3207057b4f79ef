//! Selection and scale-out: tag expressions, FILE:LINE, --shard K/N (the shards together
//! are exactly the full run) and `report merge`.

mod common;

use std::collections::BTreeSet;

use common::{read_json, run, stdio_target};
use serde_json::Value;

fn ids(v: &Value) -> Vec<String> {
    v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

fn run_json(args: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", json.to_str().unwrap()]);
    let r = run(&all);
    assert!(json.exists(), "{r:?}");
    (r.code, read_json(&json))
}

#[test]
fn shards_partition_the_run_and_merge_restores_it() {
    let server = stdio_target(&[]);
    let base = [
        "run",
        "examples/scenarios",
        "--stdio",
        &server,
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
    ];
    let (code, full) = run_json(&base);
    assert_eq!(code, 0);
    let full_ids = ids(&full);
    assert!(full_ids.len() >= 6, "{full_ids:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut seen: Vec<String> = Vec::new();
    let mut files = Vec::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let file = dir.path().join(format!("shard{k}.json"));
        let mut args = base.to_vec();
        args.extend(["--shard", &shard, "--json", file.to_str().unwrap()]);
        let r = run(&args);
        assert!(r.code == 0 || r.code == 2, "{r:?}");
        if file.exists() {
            seen.extend(ids(&read_json(&file)));
            files.push(file);
        }
    }
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "shards overlap: {seen:?}");
    assert_eq!(
        unique,
        full_ids.iter().collect::<BTreeSet<_>>(),
        "the shards together are the full run"
    );

    let merged_json = dir.path().join("merged.json");
    let merged_junit = dir.path().join("merged.xml");
    let mut args = vec!["report", "merge"];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    args.extend([
        "--json",
        merged_json.to_str().unwrap(),
        "--junit",
        merged_junit.to_str().unwrap(),
    ]);
    let r = run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let merged = read_json(&merged_json);
    assert_eq!(
        ids(&merged),
        full_ids,
        "merge restores the order of the full run"
    );
    assert_eq!(merged["summary"], full["summary"]);
    assert!(
        std::fs::read_to_string(&merged_junit)
            .unwrap()
            .contains("<testsuites")
    );

    // Each shard's result says which shard of which run it is.
    let shard_infos: Vec<Value> = files
        .iter()
        .map(|f| read_json(f)["shard"].clone())
        .collect();
    for (k, info) in shard_infos.iter().enumerate() {
        assert_eq!(info["index"], k + 1, "{info}");
        assert_eq!(info["count"], 3, "{info}");
        assert_eq!(info["total"], full_ids.len(), "{info}");
        assert_eq!(info["runId"], shard_infos[0]["runId"], "one run, one id");
    }
    assert!(
        full.get("shard").is_none(),
        "an unsharded run has no shard info"
    );
    assert_eq!(files.len(), 3, "every shard has items here");
    let merge = |inputs: &[&std::path::Path]| {
        let mut args = vec!["report".to_string(), "merge".to_string()];
        args.extend(inputs.iter().map(|p| p.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&args)
    };
    // The same shard twice (the old merge reported twice the suites, exit 0).
    let r = merge(&[&files[0], &files[1], &files[1], &files[2]]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("shard 2/3 of run"), "{r:?}");
    assert!(r.stderr.contains("is given twice"), "{r:?}");
    // A shard missing.
    let r = merge(&[&files[0], &files[2]]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("missing shard 2/3 of run"), "{r:?}");
    // A shard of another run in place of one of this run: both runs are incomplete.
    let mut other = read_json(&files[1]);
    other["shard"]["runId"] = Value::from("0000000000000000");
    let other_file = dir.path().join("other.json");
    std::fs::write(&other_file, other.to_string()).unwrap();
    let r = merge(&[&files[0], &other_file, &files[2]]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("missing shard 2/3 of run"), "{r:?}");
    // Complete runs of different selections merge (the CI example: one run per era).
    let mut per_era = Vec::new();
    for era in ["legacy", "2026-07-28"] {
        let file = dir.path().join(format!("{era}.json"));
        let r = run(&[
            "run",
            "examples/scenarios",
            "--stdio",
            &server,
            "--era",
            era,
            "--shard",
            "1/1",
            "--json",
            file.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{r:?}");
        per_era.push(file);
    }
    let r = merge(&[&per_era[0], &per_era[1]]);
    assert_eq!(r.code, 0, "{r:?}");
    // More shards than items: the empty shards write empty results, which merge.
    let mut many = Vec::new();
    for k in 1..=8 {
        let file = dir.path().join(format!("many{k}.json"));
        let shard = format!("{k}/8");
        let r = run(&[
            "run",
            "examples/scenarios/tools.yaml",
            "--stdio",
            &server,
            "--era",
            "legacy",
            "--shard",
            &shard,
            "--json",
            file.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{shard}: {r:?}");
        many.push(file);
    }
    let many: Vec<&std::path::Path> = many.iter().map(|p| p.as_path()).collect();
    let r = merge(&many);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("1 suites"), "{r:?}");
    // An unsharded result given twice.
    let full_file = dir.path().join("full.json");
    std::fs::write(&full_file, full.to_string()).unwrap();
    let r = merge(&[&full_file, &full_file]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("a result is given twice"), "{r:?}");
    let r = merge(&[&full_file]);
    assert_eq!(r.code, 0, "one full result merges to itself: {r:?}");
}

#[test]
fn bad_shard_and_tag_expressions_exit_2() {
    let server = stdio_target(&[]);
    for (flag, value, needle) in [
        ("--shard", "4/3", "between 1 and N"),
        ("--shard", "x", "expected K/N"),
        ("--tag", "smoke and", "ends where a tag was expected"),
        ("--tag", "(smoke", "missing `)`"),
    ] {
        let r = run(&["run", "examples/scenarios", "--stdio", &server, flag, value]);
        assert_eq!(r.code, 2, "{flag} {value}: {r:?}");
        assert!(r.stderr.contains(needle), "{flag} {value}: {r:?}");
    }
}

#[test]
fn tag_expressions_select_scenarios() {
    let server = stdio_target(&[]);
    let (_, v) = run_json(&[
        "run",
        "examples/scenarios",
        "--stdio",
        &server,
        "--era",
        "2026-07-28",
        "--tag",
        "smoke and not protocol",
    ]);
    let got: BTreeSet<String> = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scenario"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        got,
        ["resources-and-prompts", "tools"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    let (_, v) = run_json(&[
        "run",
        "examples/scenarios",
        "--stdio",
        &server,
        "--era",
        "2026-07-28",
        "--tag",
        "protocol or contract",
    ]);
    let got: BTreeSet<String> = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scenario"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        got,
        ["contract", "modern-protocol", "raw-probes"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}

#[test]
fn file_line_selects_a_scenario_or_a_step_with_the_steps_before_it() {
    let server = stdio_target(&[]);
    let text =
        std::fs::read_to_string(common::repo_root().join("examples/scenarios/tools.yaml")).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("name: a captured value feeds the next call"))
        .unwrap()
        + 1;
    let arg = format!("examples/scenarios/tools.yaml:{}", line + 2);
    let (code, v) = run_json(&["run", &arg, "--stdio", &server, "--era", "2026-07-28"]);
    assert_eq!(code, 0);
    let steps: Vec<&str> = v["suites"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "lists the tools",
            "add returns structured content",
            "a captured value feeds the next call"
        ]
    );
    let (_, v) = run_json(&[
        "run",
        "examples/scenarios/tools.yaml:1",
        "--stdio",
        &server,
        "--era",
        "2026-07-28",
    ]);
    assert_eq!(
        v["suites"][0]["steps"].as_array().unwrap().len(),
        7,
        "a line before the first step selects the whole scenario"
    );
}

/// Reports are the same whatever `--jobs` (suites in input order), apart from timings.
#[test]
fn reports_do_not_depend_on_jobs() {
    let server = stdio_target(&[]);
    let normalize = |v: &Value| -> Value {
        let mut v = v.clone();
        fn strip(v: &mut Value) {
            match v {
                Value::Object(m) => {
                    for key in ["duration", "startedAt", "atMs", "starting"] {
                        m.remove(key);
                    }
                    m.values_mut().for_each(strip);
                }
                Value::Array(a) => a.iter_mut().for_each(strip),
                _ => {}
            }
        }
        strip(&mut v);
        v
    };
    let base = [
        "run",
        "examples/scenarios",
        "--stdio",
        &server,
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
    ];
    let mut one = base.to_vec();
    one.extend(["--jobs", "1"]);
    let mut four = base.to_vec();
    four.extend(["--jobs", "4"]);
    let (_, a) = run_json(&one);
    let (_, b) = run_json(&four);
    assert_eq!(normalize(&a), normalize(&b));
}

/// `report merge` of runs against two servers: each suite keeps the target it ran against
/// (JSON and JUnit), the header names both (every suite was labelled with the first run's).
#[test]
fn merge_keeps_each_suites_own_target() {
    let dir = tempfile::tempdir().unwrap();
    let stdio = stdio_target(&[]);
    let http = common::HttpServer::start(&[]);
    let one = dir.path().join("stdio.json");
    let two = dir.path().join("http.json");
    for (target, era, file) in [
        (["--stdio", stdio.as_str()], "legacy", &one),
        (["--url", http.url.as_str()], "2026-07-28", &two),
    ] {
        let mut args = vec!["run", "examples/scenarios/tools.yaml", "--era", era];
        args.extend(target);
        args.extend(["--json", file.to_str().unwrap()]);
        let r = run(&args);
        assert_eq!(r.code, 0, "{r:?}");
    }
    let merged = dir.path().join("merged.json");
    let junit = dir.path().join("merged.xml");
    let r = run(&[
        "report",
        "merge",
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "--json",
        merged.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let merged = read_json(&merged);
    let header = merged["target"].as_str().unwrap();
    assert!(header.starts_with("2 targets: stdio: "), "{header}");
    assert!(header.contains(&format!("http: {}", http.url)), "{header}");
    for suite in merged["suites"].as_array().unwrap() {
        let id = suite["id"].as_str().unwrap();
        let (target, transport) = (&suite["target"]["target"], &suite["target"]["transport"]);
        if id.ends_with("@legacy") {
            assert!(target.as_str().unwrap().starts_with("stdio: "), "{suite}");
            assert_eq!(transport, "stdio");
        } else {
            assert_eq!(
                target,
                &Value::from(format!("http: {}", http.url)),
                "{suite}"
            );
            assert_eq!(transport, "http");
        }
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    let http_prop = format!("<property name=\"target\" value=\"http: {}\"/>", http.url);
    assert!(xml.contains(&http_prop), "{xml}");
    assert!(
        xml.contains("<property name=\"target\" value=\"stdio: "),
        "{xml}"
    );
}
