fn main() {
    std::process::exit(mcpspec::face::app::main());
}
