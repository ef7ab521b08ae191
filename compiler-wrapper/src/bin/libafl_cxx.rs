fn main() {
    compiler_wrapper::run(true)
}
