//! Tells the program which cargo profile built it, so `bench` can say when its
//! figures come from a build without the optimisations the README's figures use;
//! and tells the tests which outside programs this machine has, so a test that
//! needs one it lacks is built `#[ignore]`d with the reason, and shows in
//! `cargo test`'s summary as ignored, never as a pass.
use std::path::{Path, PathBuf};

fn main() {
    // OUT_DIR is target/[<triple>/]<profile>/build/<package>-<hash>/out.
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let profile = Path::new(&out)
        .ancestors()
        .nth(3)
        .and_then(|p| p.file_name())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!("cargo:rustc-env=HANDSHAKE_PROFILE={profile}");
    println!("cargo:rerun-if-changed=build.rs");
    bundle_scenarios(Path::new(&out));
    // The programs the browser and page-script tests run (tests/browser.rs,
    // tests/view.rs): found now, or those tests are ignored.
    println!("cargo::rustc-check-cfg=cfg(has_chromium)");
    println!("cargo::rustc-check-cfg=cfg(has_node)");
    println!("cargo::rustc-check-cfg=cfg(has_script)");
    println!("cargo::rustc-check-cfg=cfg(has_fonts)");
    println!("cargo::rustc-check-cfg=cfg(has_setpriv)");
    println!("cargo:rerun-if-env-changed=CHROMIUM");
    println!("cargo:rerun-if-env-changed=PATH");
    let dirs: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    // Installing one later changes its folder: the tests are built again.
    for d in dirs.iter().filter(|d| d.is_dir()) {
        println!("cargo:rerun-if-changed={}", d.display());
    }
    let named = std::env::var_os("CHROMIUM").map(PathBuf::from).filter(|p| runnable(p));
    if named.is_some() || ["chromium", "chromium-browser", "google-chrome"].iter().any(|n| on_path(&dirs, n)) {
        println!("cargo:rustc-cfg=has_chromium");
    }
    if on_path(&dirs, "node") {
        println!("cargo:rustc-cfg=has_node");
    }
    // util-linux's `script`, which the terminal tests run commands under.
    if on_path(&dirs, "script") {
        println!("cargo:rustc-cfg=has_script");
    }
    // util-linux's `setpriv`, which the tests of a folder one may not read
    // run the program under as another user (root reads every folder).
    if on_path(&dirs, "setpriv") {
        println!("cargo:rustc-cfg=has_setpriv");
    }
    // A font, which the picture tests measure text with (tests/view.rs):
    // where the SVG library looks for the system's fonts on Linux.
    let font_dirs = ["/usr/share/fonts", "/usr/local/share/fonts"];
    for d in font_dirs {
        println!("cargo:rerun-if-changed={d}");
    }
    if font_dirs.iter().any(|d| has_font(Path::new(d), 4)) {
        println!("cargo:rustc-cfg=has_fonts");
    }
}

/// Whether `dir` holds a TrueType or OpenType font, looking `depth` folders down.
fn has_font(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.filter_map(Result::ok).any(|e| {
        let p = e.path();
        if p.is_dir() {
            depth > 0 && has_font(&p, depth - 1)
        } else {
            p.extension().is_some_and(|x| ["ttf", "otf", "ttc"].iter().any(|f| x.eq_ignore_ascii_case(f)))
        }
    })
}

/// The bundled scenarios, built into the program (`src/bundled.rs`): each
/// file of scenarios/ by name, its text included whole, in name order.
fn bundle_scenarios(out: &Path) {
    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut table = String::from("&[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap_or_default().to_string_lossy().into_owned();
        table.push_str(&format!("    ({name:?}, include_str!({:?})),\n", f.display().to_string()));
    }
    table.push(']');
    let _ = std::fs::write(out.join("bundled.rs"), table);
}

fn on_path(dirs: &[PathBuf], name: &str) -> bool {
    dirs.iter().any(|d| runnable(&d.join(name)))
}

#[cfg(unix)]
fn runnable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn runnable(p: &Path) -> bool {
    p.is_file()
}
