// Reads one torch treespec_dumps string per line and writes, per line, yobx's treespec_dumps of
// what yobx's treespec_loads read (check_treespec_torch.py compares it with torch's own).
#include <yobx/treespec_torch.hpp>

#include <iostream>
#include <string>

int main() {
    std::string line;
    while (std::getline(std::cin, line)) std::cout << yobx::treespec_dumps(yobx::treespec_loads(line)) << "\n";
}
