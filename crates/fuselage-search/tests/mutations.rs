//! The one-edit mutations: every edit yields a partition into connected groups with an acyclic
//! group graph, and each kind does what it says.

use fuselage_cost::{Cached, CostConfig, Lbdf};
use fuselage_ir::Plan;
use fuselage_search::Problem;
use fuselage_search::mutate::{Mutation, mutate};
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
