//! Memory of large runs (issue #4): `mcpspec run` drops each scenario's compiled steps
//! once it is validated and compiles them again when its turn comes, so what a loaded
//! scenario costs is its source text and a few ids, not its compiled steps.
//!
//! Live heap bytes are counted by a global allocator of this test binary (one test per
//! binary, so no other thread allocates while it measures).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use mcpspec::dsl::load::load_all;
use mcpspec::dsl::pack::ParamInputs;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SCENARIOS: usize = 300;

/// The 5-step scenarios of `bench/scale.sh`, plus a schema file expectation.
fn write_pack(dir: &Path) {
    std::fs::write(dir.join("list.schema.json"), r#"{"type": "object"}"#).unwrap();
    for i in 1..=SCENARIOS {
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
      - {{ path: "$.messages[0].content.text", matches: "^Hello.*Ada {i}" }}
"#,
            sum = i + 1
        );
        std::fs::write(dir.join(format!("scale-{i:05}.yaml")), text).unwrap();
    }
}

/// Live bytes per scenario held by a load of `dir`, and the loaded set.
fn loaded_bytes(dir: &Path, release_steps: bool) -> (usize, mcpspec::dsl::load::LoadedSet) {
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
    let dir = tempfile::tempdir().unwrap();
    write_pack(dir.path());

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
    assert!(
        released < source + 1024,
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
