//! The same exposition in the Prometheus text format (0.0.4), for clients that do not ask for
//! OpenMetrics: `curl`, `promtool check metrics`, vmagent. In OpenMetrics a counter's family is
//! named without `_total` and its sample with it; a text-format reader takes the sample for a
//! family of its own, with no HELP and no TYPE (`process_cpu_seconds_total no help text`). So
//! each counter's HELP and TYPE are renamed to its sample's name, and what the text format does
//! not have (`# UNIT`, `# EOF`) is left out. Samples and label escaping are the same in both.

use std::collections::HashSet;

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether an `Accept` header asks for OpenMetrics (Prometheus does, first); anything else
/// gets the text format, as every Prometheus client library answers.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let is_om = parts
                .next()
                .is_some_and(|m| m.eq_ignore_ascii_case("application/openmetrics-text"));
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            is_om && !refused
        })
    })
}

/// `openmetrics` rewritten in the text format.
pub fn from_openmetrics(openmetrics: &str) -> String {
    let counters: HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + 64);
    for l in openmetrics.lines() {
        if l == "# EOF" || l.starts_with("# UNIT ") {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| Some((p, l.strip_prefix(p)?)));
        match meta {
            Some((p, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let tail = if p == "# TYPE " && tail == "unknown" {
                    "untyped"
                } else {
                    tail
                };
                let suffix = if counters.contains(name) {
                    "_total"
                } else {
                    ""
                };
                out.push_str(&format!("{p}{name}{suffix} {tail}"));
            }
            None => out.push_str(l),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_as_their_samples_and_openmetrics_only_lines_go() {
        let om = "# HELP process_cpu_seconds CPU.\n# TYPE process_cpu_seconds counter\n\
                  # UNIT process_cpu_seconds seconds\nprocess_cpu_seconds_total 1.5\n\
                  # HELP up Up.\n# TYPE up gauge\nup{a=\"x y\"} 1\n# EOF\n";
        assert_eq!(
            from_openmetrics(om),
            "# HELP process_cpu_seconds_total CPU.\n# TYPE process_cpu_seconds_total counter\n\
             process_cpu_seconds_total 1.5\n# HELP up Up.\n# TYPE up gauge\nup{a=\"x y\"} 1\n"
        );
    }

    #[test]
    fn prometheus_gets_openmetrics_and_everyone_else_text() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                          version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(wants_openmetrics(Some(prometheus)));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(Some(
            "text/plain;version=0.0.4;q=1,*/*;q=0.1"
        )));
        assert!(!wants_openmetrics(Some("application/openmetrics-text;q=0")));
        assert!(!wants_openmetrics(None));
    }
}
