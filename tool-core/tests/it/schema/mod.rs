pub mod implied_soundness;
pub mod output_implied;
pub mod output_tree;
pub mod strict_table;
