//! The scenario file as a document: read, written back whole and read
//! again, every bundled scenario is the same scenario. Its runs give the
//! same trace, byte for byte, and writing it a second time gives the same
//! text (what the writer writes, the reader reads as it was).

mod common;

use common::{bundled_files as bundled, library_trace as trace};
use handshake::format::file::read;
use handshake::format::write::document;
use handshake::scenario::{load_str, run_scenario, RunOptions};

fn rewritten(path: &str, text: &str) -> String {
    let (doc, problems) = read(text).unwrap_or_else(|p| panic!("{path}: {p:?}"));
    assert!(problems.is_empty(), "{path}: {problems:?}");
    document(&doc)
}

#[test]
fn every_bundled_scenario_read_and_written_back_runs_as_it_did() {
    let files = bundled();
    assert!(files.len() >= 50, "{} files", files.len());
    for path in files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("reads");
        let written = rewritten(&name, &text);
        // Written again, the same text: nothing is lost or reworded on the way.
        assert_eq!(rewritten(&name, &written), written, "{name}");
        let original = load_str(&name, &text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let again = load_str(&name, &written).unwrap_or_else(|e| panic!("{name} as written: {e:?}\n{written}"));
        assert_eq!(again.expects.len(), original.expects.len(), "{name}");
        for seed in [original.default_seed(), 2, 3] {
            assert_eq!(trace(&again, seed), trace(&original, seed), "{name} seed {seed}, as written:\n{written}");
        }
        assert_eq!(
            run_scenario(&again, again.default_seed(), RunOptions::default()).passed,
            run_scenario(&original, original.default_seed(), RunOptions::default()).passed,
            "{name}"
        );
    }
}

#[test]
fn what_a_file_leaves_out_it_is_not_written_with() {
    let text = "name = \"x\"\n[[teammate]]\nname = \"alice\"\n";
    assert_eq!(rewritten("x.toml", text), "name = \"x\"\n\n[[teammate]]\nname = \"alice\"\n");
    // A defence at its default is not written; one switched off is.
    let text = "name = \"x\"\n[policy.defences]\nkind_check = true\nsender_auth = false\n";
    assert_eq!(rewritten("x.toml", text), "name = \"x\"\n\n[policy.defences]\nsender_auth = false\n");
}
