fn main() {
    std::process::exit(mcpspec::app::main());
}
