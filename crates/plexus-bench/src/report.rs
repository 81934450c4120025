//! The JSON-lines output format shared by all benchmarks, and the process usage figures
//! several report.

/// `getrusage(who)`: this process's (`RUSAGE_SELF`) or its waited-for children's
/// (`RUSAGE_CHILDREN`) resource usage; `None` if the call fails.
pub fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    // SAFETY: getrusage writes one `rusage` into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrusage(who, &mut usage) } == 0).then_some(usage)
}

/// CPU time this process has used so far, user and system, all threads, in milliseconds.
pub fn process_cpu_ms() -> f64 {
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    rusage(libc::RUSAGE_SELF).map_or(f64::NAN, |u| ms(u.ru_utime) + ms(u.ru_stime))
}

/// One measured figure; `baseline` is measured in the same run.
pub struct Figure<'a> {
    pub name: &'a str,
    pub value: f64,
    pub unit: &'a str,
    pub baseline: Option<f64>,
    /// Extra numeric context (scale, threads, …).
    pub extra: Vec<(&'a str, f64)>,
    /// Extra text context (policy, system, …).
    pub labels: Vec<(&'a str, String)>,
}

impl<'a> Figure<'a> {
    pub fn new(name: &'a str, value: f64, unit: &'a str) -> Self {
        Self {
            name,
            value,
            unit,
            baseline: None,
            extra: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// A figure that could not be measured: printed with `"value": null` and `"error"`.
    pub fn failed(name: &'a str, unit: &'a str, error: &str) -> Self {
        Self::new(name, f64::NAN, unit).with_label("error", error)
    }

    pub fn baseline(mut self, baseline: f64) -> Self {
        self.baseline = Some(baseline);
        self
    }

    pub fn with(mut self, key: &'a str, value: f64) -> Self {
        self.extra.push((key, value));
        self
    }

    pub fn with_label(mut self, key: &'a str, value: &str) -> Self {
        self.labels.push((key, value.to_string()));
        self
    }

    pub fn print(&self) {
        let mut line = format!(
            r#"{{"name": "{}", "value": {}, "unit": "{}""#,
            self.name,
            number(self.value),
            self.unit
        );
        if let Some(b) = self.baseline {
            line += &format!(
                r#", "baseline": {}, "ratio": {}"#,
                number(b),
                number(self.value / b)
            );
        }
        for (k, v) in &self.labels {
            line += &format!(r#", "{k}": "{}""#, escape(v));
        }
        for (k, v) in &self.extra {
            line += &format!(r#", "{k}": {}"#, number(*v));
        }
        println!("{line}}}");
    }
}

/// `text` as the inside of a JSON string.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{:.4e}", x).replace("e0", "")
    } else {
        "null".into()
    }
}
