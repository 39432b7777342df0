//! Tells the program which cargo profile built it, so `bench` can say when its
//! figures come from a build without the optimisations the README's figures use.
fn main() {
    // OUT_DIR is target/[<triple>/]<profile>/build/<package>-<hash>/out.
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let profile = std::path::Path::new(&out)
        .ancestors()
        .nth(3)
        .and_then(|p| p.file_name())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!("cargo:rustc-env=HANDSHAKE_PROFILE={profile}");
    println!("cargo:rerun-if-changed=build.rs");
}
