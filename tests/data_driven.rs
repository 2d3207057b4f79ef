//! Data-driven steps (`each`) and `setup`/`teardown`, as data: every `tests/data_driven/*.yaml`
//! (and every folder there: a pack, for `each` on a group call) runs against the example
//! server and each step ends as its `.expected` file (a folder's `expected`) says
//! (`check id: status`, in order — so the row ids and the phases' order are checked too).

mod common;

use common::{example_server, run};

#[test]
fn each_case_ends_as_expected() {
    let dir = common::repo_root().join("tests/data_driven");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 3, "cases found: {cases:?}");
    let server = example_server().display().to_string();
    for case in cases {
        let expected_file = if case.is_dir() {
            case.join("expected")
        } else {
            case.with_extension("expected")
        };
        let expected = std::fs::read_to_string(&expected_file).unwrap();
        let want: Vec<(String, String)> = expected
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (id, status) = l.rsplit_once(": ").expect("`id: status`");
                (id.to_string(), status.to_string())
            })
            .collect();
        let r = run(&[
            "run",
            case.to_str().unwrap(),
            "--stdio",
            &server,
            "--json",
            "-",
        ]);
        let report: serde_json::Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("{}: no JSON ({e}):\n{}", case.display(), r.all_output()));
        let got: Vec<(String, String)> = report["suites"][0]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_string(),
                    s["outcome"]["status"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(got, want, "{}:\n{}", case.display(), r.stderr);
        let failing = want.iter().any(|(_, s)| s == "failed");
        assert_eq!(r.code, if failing { 1 } else { 0 }, "{}", case.display());
    }
}
