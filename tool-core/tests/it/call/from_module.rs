//! `Registry::from_module`: the linked `#[tool]`s of one module tree, each tree its own
//! registry. (Two trees defining the same id in one binary, with the global registry then
//! unusable, is `tests/ui/pass.rs`'s case: this binary's global registry must stay valid.)

use serde_json::json;
use tool_core::{CallOptions, Registry};

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
    #[tool(id = "fm-salut")]
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
async fn each_module_tree_gets_its_own_tools() {
    let here = module_path!();
    let english = Registry::from_module(&format!("{here}::english")).unwrap();
    assert_eq!(ids(&english), ["fm-bye", "fm-greet"], "the module and the modules below it");
    let french = Registry::from_module(&format!("{here}::french")).unwrap();
    assert_eq!(ids(&french), ["fm-salut"]);
    assert_eq!(ids(&Registry::from_module(here).unwrap()), ["fm-bye", "fm-greet", "fm-salut"]);

    let args = || json!({"name": "Ada"});
    let out = english.call("fm-greet", args(), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("hello Ada"));
    let out = french.call("fm-salut", args(), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("bonjour Ada"));

    // A prefix of a module's name is not that module.
    assert!(Registry::from_module(&format!("{here}::eng")).unwrap().is_empty());
}
