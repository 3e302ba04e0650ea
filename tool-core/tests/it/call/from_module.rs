//! `Registry::from_module`: the linked `#[tool]`s of one module tree, without the global
//! registry, so two modules of one binary may define the same id (as test programs do).

use serde_json::json;
use tool_core::{CallOptions, Registry, RegistryProblem};

mod english {
    use tool_core::tool;

    /// Greets in English
    #[tool(id = "fm-greet")]
    pub async fn greet(
        /// Who to greet
        name: String,
    ) -> String {
        format!("hello {name}")
    }

    pub mod nested {
        use tool_core::tool;

        /// Says goodbye in English
        #[tool(id = "fm-bye")]
        pub async fn bye() -> String {
            "bye".into()
        }
    }
}

mod french {
    use tool_core::tool;

    /// Greets in French
    #[tool(id = "fm-greet")]
    pub async fn greet(
        /// Who to greet
        name: String,
    ) -> String {
        format!("bonjour {name}")
    }
}

fn ids(registry: &Registry) -> Vec<String> {
    registry.tools().iter().map(|t| t.spec().id.clone()).collect()
}

#[tokio::test]
async fn each_module_tree_gets_its_own_tools_under_a_shared_id() {
    let here = module_path!();
    let english = Registry::from_module(&format!("{here}::english")).unwrap();
    assert_eq!(ids(&english), ["fm-bye", "fm-greet"], "the module and the modules below it");
    let french = Registry::from_module(&format!("{here}::french")).unwrap();
    assert_eq!(ids(&french), ["fm-greet"]);

    let args = || json!({"name": "Ada"});
    let out = english.call("fm-greet", args(), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("hello Ada"));
    let out = french.call("fm-greet", args(), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("bonjour Ada"));

    // A prefix of a module's name is not that module.
    assert!(Registry::from_module(&format!("{here}::eng")).unwrap().is_empty());
}

#[test]
fn a_shared_id_inside_one_tree_is_reported_with_both_definitions() {
    let err = Registry::from_module(module_path!()).unwrap_err();
    let duplicate = err.0.iter().find_map(|p| match p {
        RegistryProblem::DuplicateId { id, first, second } if id == "fm-greet" => Some((first, second)),
        _ => None,
    });
    let (first, second) = duplicate.expect("the duplicate id is reported");
    assert_ne!(first.module_path, second.module_path);
    assert!(first.file.ends_with("from_module.rs") && second.file.ends_with("from_module.rs"));
}
