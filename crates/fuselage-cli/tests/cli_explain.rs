//! `fuselage explain` end to end: ranked edges with the cut each suggests, JSON, DOT and SVG
//! output, every explainer, determinism, and clear errors.

mod common;

use common::{fuselage, tmp};

use serde_json::Value;
use std::process::Output;

const GROUP: &str = "/layer2/layer2.0/conv1/Conv../layer2/layer2.1/relu_2/Relu";

fn explain(explainer: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "explain",
        "resnet50",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--group",
        GROUP,
        "--explainer",
        explainer,
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    fuselage(&args)
}

#[test]
fn every_explainer_ranks_every_edge_deterministically() {
    for e in ["gnne", "pg", "rg", "cost", "random"] {
        let out = explain(e, &["--json"]);
        assert!(
            out.status.success(),
            "{e}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["explainer"], e);
        assert_eq!(v["exact_valid"], false);
        let edges = v["edges"].as_array().unwrap();
        // Two bottleneck blocks: 15 nodes and 15 edges inside the group.
        assert_eq!(edges.len(), 15, "{e}: every edge of the group is scored");
        let scores: Vec<f64> = edges.iter().map(|x| x["score"].as_f64().unwrap()).collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "{e}: ranked best first"
        );
        let selected = edges.iter().filter(|x| x["selected"] == true).count();
        assert_eq!(selected, (edges.len() as f64 * 0.25).ceil() as usize);
        assert!(
            edges
                .iter()
                .all(|x| x["cut_worst_part_bytes"].as_u64().unwrap()
                    < v["exact_buffer_bytes"].as_u64().unwrap())
        );
        assert_eq!(
            out.stdout,
            explain(e, &["--json"]).stdout,
            "{e} is not deterministic"
        );
    }
}

#[test]
fn the_table_dot_and_svg_show_the_ranking() {
    let (dot, svg) = (tmp("g.dot"), tmp("g.svg"));
    let out = explain(
        "cost",
        &[
            "--dot",
            dot.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("cost explainer"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("1*")),
        "{text}"
    );
    let dot = std::fs::read_to_string(dot).unwrap();
    assert!(dot.starts_with("digraph") && dot.contains("penwidth") && dot.contains("label=\"#1 "));
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("<svg") && svg.contains("cost explainer"));
}

#[test]
fn the_inequality_and_its_levers_are_printed() {
    let out = explain("gnne", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_slice(&explain("gnne", &["--json"]).stdout).unwrap();
    let (need, over) = (
        v["exact_buffer_bytes"].as_u64().unwrap(),
        v["overflow_bytes"].as_u64().unwrap(),
    );
    assert_eq!(need - over, 128 * 1024);
    // The printed terms sum to the printed F_β.
    let terms: u64 = v["weight_bytes"].as_u64().unwrap()
        + v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["bytes"].as_u64().unwrap())
            .sum::<u64>();
    assert_eq!(terms, need);
    assert!(
        text.contains(&format!("exceeds β by {over} bytes")),
        "{text}"
    );
    let smallest = v["smallest_buffer_bytes"].as_u64().unwrap();
    assert!(
        text.contains(&format!("smallest buffer that fits: {smallest} bytes")),
        "{text}"
    );
    assert!(
        text.contains("cheapest split into parts that fit"),
        "{text}"
    );
    assert!(text.contains("dominating tensor:"), "{text}");
    assert!(
        text.contains("rank agreement with the exact attribution"),
        "{text}"
    );
    // β reads in KiB, not as 1048576 KiB.
    assert!(
        text.lines().next().unwrap().contains("β = 128 KiB"),
        "{text}"
    );
}

#[test]
fn a_group_that_fits_gets_its_terms_and_no_ranking() {
    let out = fuselage(&[
        "explain",
        "resnet50",
        "--fusion",
        "lbdf",
        "--buffer",
        "1MiB",
        "--group",
        "/layer1/layer1.0/conv1/Conv../layer1/layer1.0/relu/Relu",
        "--explainer",
        "gnne",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("fits: F_β = "), "{text}");
    assert!(text.lines().next().unwrap().contains("β = 1 MiB"), "{text}");
    assert!(text.contains("< β = 1048576 bytes (1 MiB)"), "{text}");
    assert!(
        !text.contains("rank score") && !text.contains("levers"),
        "{text}"
    );
}

#[test]
fn bad_arguments_are_clear_errors() {
    let out = explain("nope", &[]);
    assert_eq!(out.status.code(), Some(1));
    let out = fuselage(&[
        "explain",
        "resnet50",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--group",
        "/no/such/Conv",
        "--explainer",
        "cost",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/Conv"));
}
