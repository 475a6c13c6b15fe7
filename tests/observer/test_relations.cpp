// find_relations: exact relations between dynamic dimensions, on observation
// sets where the truth is known, including sets built to tempt a false one.
#include <yobx/observer/relations.hpp>

#include <doctest/doctest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

using yobx::DimSeries;
using yobx::find_relations;
using yobx::RelationKind;

namespace {

std::vector<std::string> strings(const std::vector<yobx::DimRelation>& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs) out.push_back(r.to_string());
    return out;
}

using S = std::vector<std::string>;

}  // namespace

TEST_CASE("the LLM scenario: total_sequence_length = past_sequence_length + sequence_length") {
    // Two prompts (5 and 7 tokens), each a prefill (no cache: past 0) and 3 decode steps.
    const std::vector<DimSeries> series{
        {"batch_size", {2, 2, 2, 2, 3, 3, 3, 3}},
        {"sequence_length", {5, 1, 1, 1, 7, 1, 1, 1}},
        {"past_sequence_length", {0, 5, 6, 7, 0, 7, 8, 9}},
        {"total_sequence_length", {5, 6, 7, 8, 7, 8, 9, 10}}};
    const auto r = find_relations(series);
    CHECK(strings(r.relations) == S{"total_sequence_length = past_sequence_length + sequence_length"});
    CHECK(r.relations[0].kind == RelationKind::sum);
    CHECK(r.relations[0].support == 7);  // (7, 1) is seen twice
    CHECK_FALSE(r.relations[0].torch_expressible());
    CHECK(r.hints.empty());
}

TEST_CASE("offsets, scales and floor divisions with enough evidence") {
    const auto r = find_relations({{"a", {3, 8, 20}}, {"a_plus_2", {5, 10, 22}}, {"twice_a", {6, 16, 40}},
                                   {"odd", {5, 7, 11}}, {"half", {2, 3, 5}}});
    CHECK(strings(r.relations) == S{"a_plus_2 = a + 2", "twice_a = 2*a", "half = odd//2"});
    CHECK(r.relations[0].torch_expressible());
    CHECK(r.relations[1].torch_expressible());
    CHECK_FALSE(r.relations[2].torch_expressible());
    CHECK(r.relations[0].support == 3);
    CHECK(r.relations[0].evidence == 2);
    CHECK(r.hints.empty());
}

TEST_CASE("relations that tempt but must not be reported") {
    SUBCASE("an offset seen on two sizes only is a hint") {
        const auto r = find_relations({{"a", {4, 9, 9}}, {"b", {7, 12, 12}}});
        CHECK(r.relations.empty());
        CHECK(strings(r.hints) == S{"b = a + 3"});
        CHECK(r.hints[0].support == 2);
        CHECK(r.hints[0].evidence == 1);
    }
    SUBCASE("a relation broken by one call is nothing") {  // b = 2*a, b = a + c and a = b//2 each fail once
        const auto r = find_relations({{"a", {4, 9, 16, 25}}, {"b", {8, 18, 32, 53}}});
        CHECK(r.relations.empty());
        CHECK(r.hints.empty());
    }
    SUBCASE("a sum that holds in one call only is a hint, never a relation") {
        const auto r = find_relations({{"a", {2, 2}}, {"b", {3, 3}}, {"c", {5, 5}}});
        CHECK(r.relations.empty());
        CHECK(strings(r.hints) == S{"c = b + a"});  // the larger term first
    }
    SUBCASE("min_evidence raises the bar") {
        const std::vector<DimSeries> s{{"a", {3, 8, 20}}, {"b", {5, 10, 22}}};
        CHECK(strings(find_relations(s).relations) == S{"b = a + 2"});
        const auto strict = find_relations(s, {.min_evidence = 3});
        CHECK(strict.relations.empty());
        CHECK(strings(strict.hints) == S{"b = a + 2"});
    }
    SUBCASE("calls where a term is unknown are left out, not guessed") {
        const auto r = find_relations({{"a", {3, std::nullopt, 8, 20}}, {"b", {5, 100, 10, 22}}});
        CHECK(strings(r.relations) == S{"b = a + 2"});
        CHECK(r.relations[0].support == 3);
    }
    SUBCASE("an imputed size refutes a relation but never supports one") {
        // b = a//2 holds, but only two calls observed both: the imputed zeros (an absent input) do not count.
        yobx::DimSeries b{"b", {2, 0, 0, 3}, {false, true, true, false}};
        const auto r = find_relations({{"a", {5, 1, 1, 7}}, b});
        CHECK(r.relations.empty());
        CHECK(strings(r.hints) == S{"b = a//2"});
        CHECK(r.hints[0].support == 2);
        b.values[1] = 5;  // an imputed size that breaks it
        CHECK(find_relations({{"a", {5, 1, 1, 7}}, b}).hints.empty());
    }
    SUBCASE("a derived dimension is not a base, and an exact division is a scale the other way") {
        const auto r = find_relations({{"a", {2, 3, 5}}, {"b", {4, 6, 10}}, {"c", {8, 12, 20}}});
        CHECK(strings(r.relations) == S{"b = 2*a", "c = 4*a"});
    }
}

TEST_CASE("a relation some other constant also fits is a chance: a hint, never a relation") {
    // resnet's batches and heights: batch = height//45, and 46, 47, 48 fit these calls as well.
    const auto r = find_relations({{"x_dim_0", {2, 3, 4, 2}}, {"x_dim_2", {96, 160, 224, 128}}});
    CHECK(r.relations.empty());
    CHECK(strings(r.hints) == S{"x_dim_0 = x_dim_2//45"});
    CHECK(r.hints[0].fits == 2);
    // Two more calls pin k to 47 only (282//48 is 5, 281//46 is 6): then it is a relation.
    const auto pinned = find_relations({{"d", {2, 3, 4, 2, 6, 5}}, {"a", {96, 160, 224, 128, 282, 281}}});
    REQUIRE(strings(pinned.relations) == S{"d = a//47"});
    CHECK(pinned.relations[0].fits == 1);
    // Sizes that leave k unbounded (d is 0 everywhere) or all zero give nothing reported.
    CHECK(find_relations({{"d", {0, 0, 0}}, {"a", {3, 5, 9}}}).relations.empty());
    CHECK(find_relations({{"d", {0, 0, 0}}, {"a", {0, 0, 0}}}).relations.empty());
}

TEST_CASE("a chain is related whole, on a basis with no redundant entry") {
    SUBCASE("a feature pyramid, each level half the one before (exact)") {
        const auto r = find_relations({{"p2", {64, 96, 128}}, {"p3", {32, 48, 64}}, {"p4", {16, 24, 32}}});
        CHECK(strings(r.relations) == S{"p2 = 4*p4", "p3 = 2*p4"});
        CHECK(r.hints.empty());
    }
    SUBCASE("a pyramid of floor divisions") {
        const auto r = find_relations({{"p2", {66, 97, 130}}, {"p3", {33, 48, 65}}, {"p4", {16, 24, 32}}});
        CHECK(strings(r.relations) == S{"p3 = p2//2", "p4 = p2//4"});
    }
    SUBCASE("offsets compose") {
        const auto r = find_relations({{"c", {7, 9, 15}}, {"b", {6, 8, 14}}, {"a", {5, 7, 13}}});
        CHECK(strings(r.relations) == S{"c = a + 2", "b = a + 1"});
    }
}

TEST_CASE("generated observation sets: exactly the planted relations are found") {
    for (unsigned seed = 1; seed <= 20; ++seed) {
        std::mt19937 gen(seed);
        std::uniform_int_distribution<std::int64_t> size(2, 4000);
        const std::size_t calls = 6;
        std::vector<DimSeries> s{{"x", {}}, {"y", {}}, {"free", {}}, {"x_plus_7", {}}, {"x_plus_y", {}}, {"three_y", {}}};
        for (std::size_t c = 0; c < calls; ++c) {
            const std::int64_t x = size(gen), y = size(gen);
            s[0].values.push_back(x);
            s[1].values.push_back(y);
            s[2].values.push_back(size(gen));
            s[3].values.push_back(x + 7);
            s[4].values.push_back(x + y);
            s[5].values.push_back(3 * y);
        }
        INFO("seed " << seed);
        const auto r = find_relations(s);
        CHECK(r.relations.size() == 3);
        CHECK(r.relations[0].to_string() == "x_plus_7 = x + 7");
        CHECK(r.relations[1].to_string() == "three_y = 3*y");
        // The larger term first.
        CHECK(r.relations[2].kind == RelationKind::sum);
        CHECK(r.relations[2].dim == "x_plus_y");
        CHECK(std::set<std::string>{r.relations[2].base, r.relations[2].other} == std::set<std::string>{"x", "y"});
        CHECK(r.hints.empty());
    }
}
