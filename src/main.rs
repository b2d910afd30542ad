fn main() {
    println!("restorewatch: under construction");
}
