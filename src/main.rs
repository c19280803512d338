fn main() {
    std::process::exit(dbperf::cli::main());
}
