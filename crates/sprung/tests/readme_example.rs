//! The README's embedding example is `examples/embedding.rs` word for word, and it runs (from the
//! repository root, where its relative model path points). `cargo test` builds the examples next
//! to the test binaries; this test runs the built example.

#[test]
fn readme_example_is_the_example_file_and_runs() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let start = readme
        .find("```rust\n")
        .expect("a rust block in the README")
        + 8;
    let len = readme[start..].find("```").unwrap();
    let block = &readme[start..start + len];
    let example = std::fs::read_to_string(format!(
        "{}/examples/embedding.rs",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(
        example.ends_with(block),
        "README and examples/embedding.rs differ"
    );
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("examples").join("embedding"))
        .unwrap();
    assert!(
        bin.exists(),
        "the example is built by cargo test: {}",
        bin.display()
    );
    let out = std::process::Command::new(&bin)
        .current_dir(root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("t = 2 s, 288 states"), "{stdout}");
}
