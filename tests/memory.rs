//! Memory of large runs (issue #4): `mcpspec run` drops each scenario's compiled steps
//! once it is validated and compiles them again when its turn comes, so what a loaded
//! scenario costs is its source text and a few ids, not its compiled steps.
//!
//! Live heap bytes are counted by a global allocator of this test binary; the tests take
//! turns (`MEASURING`) so that one's allocations do not show in the other's figures.
#![allow(unsafe_code, reason = "a counting global allocator")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use mcpspec::language::dsl::load::load_all;
use mcpspec::language::dsl::params::ParamInputs;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

mod common;

const SCENARIOS: usize = 300;

/// One test measures at a time.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `n` of the 5-step scenarios of `bench/scale.sh`, plus a schema file expectation.
fn write_pack(dir: &Path, n: usize) {
    std::fs::write(dir.join("list.schema.json"), r#"{"type": "object"}"#).unwrap();
    for i in 1..=n {
        let text = format!(
            r#"scenario: scale-{i:05}
description: generated scale scenario {i}
tags: [scale]
steps:
  - name: lists the tools
    request: {{ method: tools/list }}
    expect:
      - {{ path: "$.tools[*].name", contains: echo }}
      - schemaFile: list.schema.json
  - name: echo returns its text
    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: "scenario {i}" }} }} }}
    expect:
      - isError: false
      - {{ path: "$.content[0].text", equals: "scenario {i}" }}
  - name: add returns the sum
    request: {{ method: tools/call, params: {{ name: add, arguments: {{ a: {i}, b: 1 }} }} }}
    expect:
      - {{ path: "$.structuredContent.sum", equals: {sum} }}
  - name: reads the readme
    request: {{ method: resources/read, params: {{ uri: "example://readme" }} }}
    expect:
      - {{ path: "$.contents[0].uri", equals: "example://readme" }}
  - name: gets the greet prompt
    request: {{ method: prompts/get, params: {{ name: greet, arguments: {{ name: "Ada {i}" }} }} }}
    expect:
      - {{ path: "$.messages[0].content.text", matches: "Ada {i}" }}
"#,
            sum = i + 1
        );
        std::fs::write(dir.join(format!("scale-{i:05}.yaml")), text).unwrap();
    }
}

/// Live bytes per scenario held by a load of `dir`, and the loaded set.
fn loaded_bytes(
    dir: &Path,
    release_steps: bool,
) -> (usize, mcpspec::language::dsl::load::LoadedSet) {
    let inputs = ParamInputs {
        release_steps,
        ..ParamInputs::default()
    };
    let before = LIVE.load(Relaxed);
    let loaded = load_all(&[dir.to_path_buf()], &inputs).expect("the pack loads");
    let held = LIVE.load(Relaxed).saturating_sub(before);
    (held / SCENARIOS, loaded)
}

#[test]
fn released_scenarios_hold_little_more_than_their_source_and_compile_again_identically() {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    write_pack(dir.path(), SCENARIOS);

    let (compiled, full) = loaded_bytes(dir.path(), false);
    let (released, lazy) = loaded_bytes(dir.path(), true);
    let source: usize = lazy
        .scenarios
        .iter()
        .map(|s| s.file.text.len())
        .sum::<usize>()
        / SCENARIOS;
    eprintln!(
        "per scenario: compiled {compiled} B, released {released} B (source text {source} B)"
    );
    // Compiled (values with positions, JSONPaths, a regex, a schema validator) is several
    // times the source; released is the source text plus ids, tags and step lines.
    assert!(
        compiled > 5 * source,
        "compiled {compiled} B, source {source} B"
    );
    // + 1280: the warm-server pool keeps, per scenario, why it may write or touch the
    // connection's life (two short reasons, decided at compile time, read by the scheduler
    // before the scenario runs) — about 150 B more than before the pool.
    assert!(
        released < source + 1280,
        "a released scenario holds {released} B (source text {source} B)"
    );
    assert!(lazy.scenarios.iter().all(|s| s.steps.is_empty()));

    // Compiled again, the steps are the same as loading them eagerly.
    for (eager, lazy) in full.scenarios.iter().zip(&lazy.scenarios) {
        let steps = lazy.compiled_steps().expect("compiles again");
        assert_eq!(steps.len(), eager.steps.len());
        assert_eq!(format!("{:?}", &*steps), format!("{:?}", eager.steps));
        assert_eq!(lazy.step_lines(), eager.step_lines());
    }

    // A `FILE:LINE` selection keeps a prefix of the released steps.
    let mut one = lazy.scenarios.into_iter().next().unwrap();
    one.truncate_steps(2);
    assert_eq!(one.compiled_steps().unwrap().len(), 2);

    // What changed on disk since validation is reported, not run: the schema file is gone.
    std::fs::remove_file(dir.path().join("list.schema.json")).unwrap();
    let errors = one
        .compiled_steps()
        .err()
        .expect("the schema file is missing");
    let text = errors.render();
    assert!(text.contains("scale-00001.yaml:"), "{text}");
    assert!(text.contains("list.schema.json"), "{text}");
}

/// Peak live bytes while `n` released scenarios run over stdio (no report files: passed
/// steps' transcripts are dropped), over the bytes held before the run started.
fn run_peak(n: usize) -> (usize, usize) {
    use mcpspec::protocol::era::Era;
    use mcpspec::run::client::{Target, TargetKind};
    use mcpspec::run::engine::{RunConfig, plan, run};

    let dir = tempfile::tempdir().unwrap();
    write_pack(dir.path(), n);
    let inputs = ParamInputs {
        release_steps: true,
        ..ParamInputs::default()
    };
    let loaded = load_all(&[dir.path().to_path_buf()], &inputs).expect("the pack loads");
    let eras = vec![Era::parse("2026-07-28").unwrap()];
    let config = RunConfig {
        target: Target {
            kind: TargetKind::Stdio {
                program: common::example_server().display().to_string(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
                sandbox: false,
            },
            timeout: std::time::Duration::from_secs(30),
            max_message_bytes: 16 << 20,
            wire_validation: false,
            auto_era: Default::default(),
        },
        eras: eras.clone(),
        jobs: 1,
        params: Default::default(),
        tool_calls: Default::default(),
        keep_passing_transcripts: false,
        wire_validate: false,
        fresh: false,
        snapshots: Default::default(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let items = plan(&loaded.scenarios, &eras);
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let events = mcpspec::results::report::events::Events::none();
    let report = rt.block_on(run(items, &config, std::future::pending(), &events));
    let peak = PEAK.load(Relaxed) - before;
    let held = LIVE.load(Relaxed).saturating_sub(before);
    assert_eq!(report.summary.passed, 5 * n, "{:#?}", report.summary);
    (peak, held)
}

#[test]
fn a_run_grows_by_its_results_only() {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let _warm = run_peak(2);
    let (small, n_small) = (run_peak(20), 20);
    let (large, n_large) = (run_peak(80), 80);
    let per = |a: usize, b: usize| (b.saturating_sub(a)) / (n_large - n_small);
    eprintln!(
        "run: peak {} -> {} B, held {} -> {} B; per scenario: peak {} B, held {} B",
        small.0,
        large.0,
        small.1,
        large.1,
        per(small.0, large.0),
        per(small.1, large.1)
    );
    // What stays per scenario is its suite result (ids, file, five step results: about
    // 1.5 KB); a transcript kept or a compiled scenario kept would be several KB more.
    let bound = 3 * 1024;
    assert!(
        per(small.1, large.1) < bound,
        "results held per scenario: {small:?} -> {large:?}"
    );
    assert!(
        per(small.0, large.0) < bound,
        "peak per scenario: {small:?} -> {large:?}"
    );
}
