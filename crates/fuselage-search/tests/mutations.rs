//! The one-edit mutations: every edit yields a partition into connected groups with an acyclic
//! group graph, and each kind does what it says.

use fuselage_cost::CostModel;
use fuselage_cost::{Cached, CostConfig, Lbdf};
use fuselage_ir::Plan;
use fuselage_search::Problem;
use fuselage_search::mutate::{Moves, Mutation, mutate};
use fuselage_split::RandomSplitter;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// From the layer-by-layer plan of resnet18, a random walk of edits stays a plan; an
    /// absorb merges one group with every fusable neighbour, so each neighbour disappears
    /// into one new group and nothing else changes.
    #[test]
    fn edits_keep_a_plan_and_absorb_merges_the_neighbourhood(seed in 0u64..1000) {
        let g = fuselage_zoo::build("resnet18").unwrap();
        let model = Cached::new(Lbdf::new(CostConfig::kib(256).unwrap()));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let kinds = [Mutation::Move, Mutation::Merge, Mutation::Split, Mutation::Absorb];
        let mut plan = Plan::singletons(&g);
        let mut absorbed = 0;
        for step in 0..40 {
            let kind = kinds[step % kinds.len()];
            let Some(next) = mutate(&p, &plan, kind, &mut rng) else { continue };
            g.check_plan(&next).unwrap();
            if kind == Mutation::Absorb {
                let fresh: Vec<_> = next.groups.iter().filter(|x| !plan.groups.contains(x)).collect();
                let gone: Vec<_> = plan.groups.iter().filter(|x| !next.groups.contains(x)).collect();
                prop_assert_eq!(fresh.len(), 1, "absorb makes exactly one new group");
                prop_assert!(gone.len() >= 2, "absorb merges at least two groups");
                let merged = fresh[0];
                let mut union = gone[0].clone();
                for x in &gone[1..] {
                    union.union_with(x);
                }
                prop_assert_eq!(&union, merged);
                prop_assert!(g.is_connected_set(merged));
                absorbed += 1;
            }
            plan = next;
        }
        prop_assert!(absorbed >= 1, "no absorb in 10 tries");
        prop_assert!(plan.len() < g.len(), "the edits merged nothing");
    }
}

/// The plan `merges` random merges make of layer by layer (fewer where a merge is refused).
fn after_merges(p: &Problem<'_>, merges: usize, seed: u64) -> Plan {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut plan = Plan::singletons(p.graph());
    for _ in 0..merges {
        if let Some(next) = mutate(p, &plan, Mutation::Merge, &mut rng) {
            plan = next;
        }
    }
    plan
}

/// `Moves::Fitting` (issue 32): merges and moves whose new group fits come first. From plans
/// one random walk away from layer by layer, on resnet50 at a buffer where many merges do not
/// fit, a fitting merge or move makes a group that fits at least twice as often as a random
/// one, and the plan is always a plan.
#[test]
fn fitting_moves_make_groups_that_fit() {
    let g = fuselage_zoo::build("resnet50").unwrap();
    let model = Cached::new(Lbdf::new(CostConfig::kib(64).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let random = Problem::new(&g, &model, &splitter).unwrap();
    let fitting = Problem::new(&g, &model, &splitter)
        .unwrap()
        .with_moves(Moves::Fitting);
    assert_eq!(random.moves(), Moves::Random);
    // A plan of pairs and singletons: 40 merges from layer by layer.
    let start = after_merges(&random, 40, 7);
    let fits_after = |p: &Problem<'_>, kind, seed| -> Option<bool> {
        let next = mutate(p, &start, kind, &mut ChaCha8Rng::seed_from_u64(seed))?;
        g.check_plan(&next).unwrap();
        let fresh: Vec<_> = next
            .groups
            .iter()
            .filter(|x| !start.groups.contains(x) && x.len() > 1)
            .collect();
        Some(fresh.iter().all(|x| model.is_valid(&g, x).unwrap()))
    };
    for kind in [Mutation::Merge, Mutation::Move] {
        let count = |p: &Problem<'_>| {
            (0..300)
                .filter_map(|seed| fits_after(p, kind, seed))
                .filter(|&fits| fits)
                .count()
        };
        let (r, f) = (count(&random), count(&fitting));
        assert!(
            f >= 2 * r && f > 0,
            "{kind:?}: random {r}, fitting {f} of 300"
        );
    }
}

/// `Mutation::Repeat` (issue 32): on resnet152, whose third stage repeats one bottleneck 36
/// times, a repeat copies groups onto twins: every result is a plan, and most have a new group
/// of several nodes that is an old group shifted by a fixed number of node ids (a twin; the
/// others copied only single nodes, or groups the twin already had).
#[test]
fn a_repeat_copies_groups_onto_a_twin() {
    let g = fuselage_zoo::build("resnet152").unwrap();
    let model = Cached::new(Lbdf::new(CostConfig::kib(128).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter)
        .unwrap()
        .with_moves(Moves::Repeating);
    let start = after_merges(&p, 150, 3);
    let shifted = |grp: &fuselage_ir::NodeSet, d: i64| -> Vec<i64> {
        grp.iter().map(|v| i64::from(v.0) + d).collect()
    };
    let (mut copied, mut twins) = (0, 0);
    for seed in 0..40 {
        let Some(next) = mutate(
            &p,
            &start,
            Mutation::Repeat,
            &mut ChaCha8Rng::seed_from_u64(seed),
        ) else {
            continue;
        };
        g.check_plan(&next).unwrap();
        let fresh: Vec<_> = next
            .groups
            .iter()
            .filter(|x| !start.groups.contains(x) && x.len() > 1)
            .collect();
        let twin = fresh.iter().any(|new| {
            let first = i64::from(new.first().unwrap().0);
            start.groups.iter().any(|old| {
                let d = first - i64::from(old.first().unwrap().0);
                d != 0 && old.len() == new.len() && shifted(old, d) == shifted(new, 0)
            })
        });
        twins += usize::from(twin);
        copied += 1;
    }
    assert!(copied >= 20, "{copied} of 40 repeats applied");
    assert!(
        2 * twins >= copied,
        "{twins} of {copied} repeats made a shifted group"
    );
}

/// What the repeat move is for: LS on resnet152 under BRR at 128 KiB, budget 2,000, seeds
/// 1–3 (random splitter). With the paper's edits the median run stays 25% above the optimum
/// (207.97 MB against 166.12); with repeats it ends at least 10% lower.
#[test]
fn repeats_take_local_search_closer_on_a_repeated_network() {
    use fuselage_cost::Brr;
    use fuselage_search::{Budget, LocalSearch, SearchStrategy};
    let g = fuselage_zoo::build("resnet152").unwrap();
    let model = Cached::new(Brr::new(CostConfig::kib(128).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let median = |moves: Moves| {
        let p = Problem::new(&g, &model, &splitter)
            .unwrap()
            .with_moves(moves);
        let mut v: Vec<u64> = (1..=3)
            .map(|seed| {
                let r = LocalSearch::default()
                    .run(&p, &Budget::new(2000).unwrap(), seed)
                    .unwrap();
                g.check_plan(&r.plan).unwrap();
                r.score.dram_bytes
            })
            .collect();
        v.sort_unstable();
        v[1]
    };
    let (paper, repeating) = (median(Moves::Random), median(Moves::Repeating));
    assert_eq!(paper, 207_971_280);
    assert!(
        (repeating as f64) < 0.9 * paper as f64,
        "repeating {repeating} against {paper}"
    );
}
