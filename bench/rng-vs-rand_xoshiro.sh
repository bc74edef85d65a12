#!/bin/sh
# ns per call of the engine's hot-path RNG use (next_u64, and `below` = Lemire multiply-shift
# on top of it) with fsbench's former hand-written xoshiro256++ and with rand_xoshiro's
# Xoshiro256PlusPlus, the crate the engine now uses. Release build, 200 M calls each, best of 5.
# Usage: bench/rng-vs-rand_xoshiro.sh   (needs cargo; builds a throwaway crate in a temp dir)
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
cat > "$dir/Cargo.toml" <<'TOML'
[package]
name = "rngbench"
version = "0.0.0"
edition = "2024"
[dependencies]
rand_core = "0.10.1"
rand_xoshiro = "0.8.2"
[profile.release]
lto = "thin"
codegen-units = 4
TOML
cat > "$dir/src/main.rs" <<'RS'
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::Instant;

struct Hand { s: [u64; 4] }
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
impl Hand {
    fn new(seed: u64) -> Self { let mut m = seed; Hand { s: [splitmix(&mut m), splitmix(&mut m), splitmix(&mut m), splitmix(&mut m)] } }
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let r = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = s[3].rotate_left(45);
        r
    }
}
const N: u64 = 200_000_000;
fn time(f: &mut dyn FnMut() -> u64) -> f64 {
    (0..5).map(|_| { let t = Instant::now(); black_box(f()); t.elapsed().as_nanos() as f64 / N as f64 }).fold(f64::MAX, f64::min)
}
fn main() {
    let n = black_box(1u64 << 30);
    let mut h = Hand::new(42);
    let mut x = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(42);
    let same = (0..1000).all(|_| h.next_u64() == x.next_u64());
    let mut h = Hand::new(42);
    let mut x = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(42);
    let a = time(&mut || { let mut acc = 0u64; for _ in 0..N { acc ^= h.next_u64(); } acc });
    let b = time(&mut || { let mut acc = 0u64; for _ in 0..N { acc ^= x.next_u64(); } acc });
    let c = time(&mut || { let mut acc = 0u64; for _ in 0..N { acc ^= ((h.next_u64() as u128 * n as u128) >> 64) as u64; } acc });
    let d = time(&mut || { let mut acc = 0u64; for _ in 0..N { acc ^= ((x.next_u64() as u128 * n as u128) >> 64) as u64; } acc });
    println!("same stream for the same seed: {same}");
    println!("next_u64  hand-written {a:.3} ns/call   rand_xoshiro {b:.3} ns/call");
    println!("below(n)  hand-written {c:.3} ns/call   rand_xoshiro {d:.3} ns/call");
}
RS
cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo run --release --quiet --offline 2>/dev/null || CARGO_TARGET_DIR="$dir/target" cargo run --release --quiet
