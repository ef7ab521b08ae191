fn main() {
    compiler_wrapper::run(false)
}
