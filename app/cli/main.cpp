#include <cstdio>

int main() {
    std::puts("tmmu: under construction");
    return 0;
}
