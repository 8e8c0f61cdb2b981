//! Fixed-base tables for a proving key's queries: the CPU backend's MSMs over a key's points
//! use them where present ([`super::affine::Table`]).

use super::affine::{Table, G1, G2};
use crate::params::{ParamsError, ProvingKey};

/// The tables of one key's queries. Each costs `⌈255/c⌉` times its query (13-20x), so a key
/// gets them, query by query, only within a memory limit.
#[derive(Debug, Default)]
pub struct Tables {
    pub(crate) h: Option<Table<G1>>,
    pub(crate) l: Option<Table<G1>>,
    pub(crate) a: Option<Table<G1>>,
    pub(crate) b_g1: Option<Table<G1>>,
    pub(crate) b_g2: Option<Table<G2>>,
}

impl Tables {
    /// Which queries (in [`ProvingKey::lengths`] order) get a table within `limit` bytes, first
    /// come first served, and the bytes those tables take. Known from the lengths alone, so a
    /// memory budget can be charged before anything is built.
    pub fn plan(lengths: [usize; 5], limit: u64) -> ([bool; 5], u64) {
        let mut picked = [false; 5];
        let mut used = 0u64;
        for (i, &n) in lengths.iter().enumerate() {
            let Some(c) = window(n) else { continue };
            let bytes = match i {
                4 => Table::<G2>::bytes(n, c),
                _ => Table::<G1>::bytes(n, c),
            };
            if used + bytes <= limit {
                picked[i] = true;
                used += bytes;
            }
        }
        (picked, used)
    }

    /// Builds the tables [`Tables::plan`] picks for `pk` within `limit` bytes.
    pub fn new(pk: &ProvingKey, limit: u64) -> Result<Self, ParamsError> {
        let (picked, _) = Self::plan(pk.lengths(), limit);
        Ok(Tables {
            h: table(picked[0], pk.h()?),
            l: table(picked[1], pk.l()?),
            a: table(picked[2], pk.a()?),
            b_g1: table(picked[3], pk.b_g1()?),
            b_g2: table(picked[4], pk.b_g2()?),
        })
    }

    /// Bytes the tables hold.
    pub fn bytes(&self) -> u64 {
        let g1 = [&self.h, &self.l, &self.a, &self.b_g1];
        let g1: u64 = g1.iter().filter_map(|t| t.as_ref()).map(Table::held).sum();
        g1 + self.b_g2.as_ref().map_or(0, Table::held)
    }
}

fn table<C: super::affine::Curve>(on: bool, points: &[C::Affine]) -> Option<Table<C>> {
    let c = window(points.len()).filter(|_| on)?;
    Some(Table::new(points, c, batch(c)))
}

/// Window bits of a table over `n` bases, or `None` where a table gains too little. With one
/// bucket array for all windows the cost is about `n·⌈255/c⌉` additions plus `2^c` per thread
/// for the reduction; measured on 2 cores (log #55, `timing` below), the best windows are
/// those whose top window is not a few bits wide (13, 15, 17; 255 = 15·17).
fn window(n: usize) -> Option<usize> {
    Some(match n {
        0..0x100 => return None,
        0x100..0x800 => 10,
        0x800..0x8000 => 13,
        0x8000..0x2_0000 => 15,
        _ => 17,
    })
}

/// Additions per inversion for `c`-bit windows: small against the bucket count.
fn batch(c: usize) -> usize {
    if c <= 12 {
        256
    } else {
        1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{random_g1, random_g2, random_scalars};
    use crate::msm;

    #[test]
    fn plans_fit_the_limit_in_query_order() {
        let lengths = [1 << 12, 1 << 10, 100, 1 << 10, 1 << 10];
        let h = Table::<G1>::bytes(1 << 12, 13);
        let l = Table::<G1>::bytes(1 << 10, 10);
        let b2 = Table::<G2>::bytes(1 << 10, 10);
        assert_eq!(Tables::plan(lengths, 0), ([false; 5], 0));
        // Short of h's: the smaller ones that fit, in order (b_g2's would pass the limit).
        assert!(2 * l + b2 > h - 1);
        assert_eq!(
            Tables::plan(lengths, h - 1),
            ([false, true, false, true, false], 2 * l)
        );
        assert_eq!(
            Tables::plan(lengths, h + l).0,
            [true, true, false, false, false]
        );
        // 100 bases get no table; b_g2's is twice b_g1's.
        assert_eq!(
            Tables::plan(lengths, u64::MAX),
            ([true, true, false, true, true], h + 2 * l + b2)
        );
    }

    /// Timing harness behind the window choice, printing medians of 5 for each window around
    /// [`window`]'s (or those in `CUZK_TABLE_WINDOWS`), against the plain Pippenger:
    /// `CUZK_TABLE_LOGS=15,17 cargo test -p cuzk-groth16 --lib tables::tests::timing --
    /// --ignored --nocapture`.
    #[test]
    #[ignore = "timing harness: prints figures, run by hand"]
    fn timing() {
        let logs: Vec<u32> = std::env::var("CUZK_TABLE_LOGS")
            .unwrap_or_else(|_| "15,17".into())
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        let median = |f: &mut dyn FnMut()| {
            let mut t: Vec<f64> = (0..5)
                .map(|_| {
                    let s = std::time::Instant::now();
                    f();
                    s.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            t.sort_by(f64::total_cmp);
            t[2]
        };
        for log in logs {
            let n = 1usize << log;
            let s = random_scalars(n, 1);
            let (p1, p2) = (random_g1(n, 2), random_g2(n, 3));
            let plain1 = median(&mut || {
                std::hint::black_box(msm::g1(&p1, &s));
            });
            let plain2 = median(&mut || {
                std::hint::black_box(msm::g2(&p2, &s));
            });
            println!("2^{log}: plain g1 {plain1:.1} ms, g2 {plain2:.1} ms");
            let c0 = window(n).unwrap();
            let windows: Vec<usize> = std::env::var("CUZK_TABLE_WINDOWS")
                .map(|w| w.split(',').filter_map(|x| x.trim().parse().ok()).collect())
                .unwrap_or_else(|_| (c0.saturating_sub(2).max(2)..=c0 + 2).collect());
            for c in windows {
                let built = std::time::Instant::now();
                let t1 = Table::<G1>::new(&p1, c, batch(c));
                let build1 = built.elapsed().as_secs_f64() * 1e3;
                let g1 = median(&mut || {
                    std::hint::black_box(t1.msm(0, &s));
                });
                drop(t1);
                let t2 = Table::<G2>::new(&p2, c, batch(c));
                let g2 = median(&mut || {
                    std::hint::black_box(t2.msm(0, &s));
                });
                println!(
                    "2^{log} c={c}: table g1 {g1:.1} ms ({:.2}x, built in {build1:.0} ms, {} MB), g2 {g2:.1} ms ({:.2}x)",
                    plain1 / g1,
                    Table::<G1>::bytes(n, c) >> 20,
                    plain2 / g2
                );
            }
        }
    }
}
