//! The Planner's one β: an accelerator and a cost model that disagree are refused.

use fuselage_cost::{Accelerator, CostConfig, CostKind};
use fuselage_pipeline::{PipelineError, Planner, Reference};

/// A model at 128 KiB with an accelerator of 256 KiB (or of other element sizes) is one clear
/// error naming both; the same accelerator through `Planner::on` plans.
#[test]
fn hardware_and_model_must_agree_on_beta() {
    let g = fuselage_zoo::build("resnet18").unwrap();
    let model = CostConfig::kib(128).unwrap();
    let hw = Accelerator::beta_only(CostConfig::kib(256).unwrap());
    let e = Planner::new(&g, CostKind::Lbdf, model)
        .hardware(hw.clone())
        .budget(10)
        .reference(Reference::Off)
        .run()
        .unwrap_err();
    assert!(matches!(e, PipelineError::HardwareMismatch { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "the accelerator `beta-only` has β = 262144 bytes (weights 1 B, activations 1 B per element) \
         but the cost model `lbdf` was built for β = 131072 bytes (weights 1 B, activations 1 B \
         per element): give the model the accelerator's configuration (Planner::on does)"
    );
    // Same β, other element sizes: refused too.
    let wide = Accelerator::beta_only(model.with_element_sizes(1, 2).unwrap());
    let e = Planner::new(&g, CostKind::Lbdf, model)
        .hardware(wide)
        .budget(10)
        .run()
        .unwrap_err();
    assert!(e.to_string().contains("activations 2 B"), "{e}");
    // Built from the accelerator, they agree.
    let out = Planner::on(&g, CostKind::Lbdf, hw)
        .budget(10)
        .reference(Reference::Off)
        .run()
        .unwrap();
    assert_eq!(out.plan_file.buffer_bytes, 256 << 10);
}

/// The improved guided search is what an explainer gets by default (issue 32): repeats among
/// the edits and `IMPROVED_RIVALS` random splits contesting each repair; the paper's method is
/// one setting away, and a run with the random splitter stays the paper's unless told.
#[test]
fn an_explainer_gets_the_improved_search_by_default_and_the_paper_one_setting_away() {
    use fuselage_explain::ExplainerKind;
    use fuselage_pipeline::{IMPROVED_MOVES, IMPROVED_RIVALS};
    use fuselage_search::mutate::Moves;
    let g = fuselage_zoo::build("resnet50").unwrap();
    let planner = || {
        Planner::new(&g, CostKind::Brr, CostConfig::kib(128).unwrap())
            .budget(300)
            .seed(2)
            .reference(Reference::Off)
    };
    let guided = planner().explainer(ExplainerKind::Cost).run().unwrap();
    assert_eq!(IMPROVED_MOVES, Moves::Repeating);
    assert_eq!(
        (guided.names.moves, guided.names.rivals),
        (IMPROVED_MOVES, IMPROVED_RIVALS)
    );
    let paper = planner()
        .explainer(ExplainerKind::Cost)
        .paper()
        .run()
        .unwrap();
    assert_eq!((paper.names.moves, paper.names.rivals), (Moves::Random, 0));
    let spelled = planner()
        .explainer(ExplainerKind::Cost)
        .moves(Moves::Random)
        .rivals(0)
        .run()
        .unwrap();
    assert_eq!(spelled.result.plan, paper.result.plan);
    let random = planner().run().unwrap();
    assert_eq!(
        (random.names.moves, random.names.rivals),
        (Moves::Random, 0)
    );
    // Contested repairs are never worse than the splitter's own, and the rivals do win.
    assert!(guided.split.rival_wins > 0, "{:?}", guided.split);
    assert_eq!(paper.split.rival_wins, 0);
    // The same settings give the same plan.
    let again = planner().explainer(ExplainerKind::Cost).run().unwrap();
    assert_eq!(again.result.plan, guided.result.plan);
}
