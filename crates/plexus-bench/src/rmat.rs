//! Seeded RMAT edge generator with the Graph500 parameters (a=0.57, b=0.19, c=0.19).

pub const EDGE_FACTOR: usize = 16;

/// SplitMix64: small, fast, deterministic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `EDGE_FACTOR * 2^scale` directed edges over `2^scale` vertices, in generation (random) order.
pub fn edges(scale: u32, seed: u64) -> Vec<(u32, u32)> {
    let n_edges = EDGE_FACTOR << scale;
    let mut rng = Rng::new(seed);
    let (a, b, c) = (0.57, 0.19, 0.19);
    let mut out = Vec::with_capacity(n_edges);
    for _ in 0..n_edges {
        let (mut src, mut dst) = (0u32, 0u32);
        for bit in (0..scale).rev() {
            let r = rng.unit();
            let (down, right) = if r < a {
                (0, 0)
            } else if r < a + b {
                (0, 1)
            } else if r < a + b + c {
                (1, 0)
            } else {
                (1, 1)
            };
            src |= down << bit;
            dst |= right << bit;
        }
        out.push((src, dst));
    }
    // Graph500 permutes vertex ids so that the degree skew is not aligned with id order.
    let n = 1usize << scale;
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for edge in &mut out {
        *edge = (perm[edge.0 as usize], perm[edge.1 as usize]);
    }
    out
}
