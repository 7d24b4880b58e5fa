// The option rules `tmmu` and tmmu-studio share (app/common/plan_choices.h): what each model
// kind accepts, what is refused and with which failure code, and the text parsers.
#include "plan_choices.h"
#include "test_support.h"

#include <QObject>

#include <cstdlib>

using namespace tmmu;

class TestPlanChoices : public QObject {
    Q_OBJECT
  private slots:
    void graphsDefaultTo128ByteAlignmentInFourArenas() {
        const PlanOptions o = app::make_plan_options({}, ModelKind::TransformerConfig);
        QCOMPARE(o.strategy, std::string("auto"));
        QCOMPARE(o.policy.arenas.size(), size_t(4));
        for (const ArenaConfig& a : o.policy.arenas) {
            QCOMPARE(a.alignment, uint64_t(128));
            QCOMPARE(a.capacity, UINT64_MAX);
        }
        QVERIFY(!o.policy.find("arena"));
    }

    void problemsPlanIntoTheirOneArena() {
        app::PlanChoices c;
        PlanOptions o = app::make_plan_options(c, ModelKind::DsaCsv);
        QVERIFY(o.policy.find("arena"));
        QCOMPARE(o.policy.find("arena")->alignment, uint64_t(1));
        // --align and a capacity apply to that arena (the CLI once ignored --align here).
        c.alignment = 4096;
        c.arenas = {{"arena", 1 << 20}};
        o = app::make_plan_options(c, ModelKind::DsaCsv);
        QCOMPARE(o.policy.find("arena")->alignment, uint64_t(4096));
        QCOMPARE(o.policy.find("arena")->capacity, uint64_t(1 << 20));
    }

    void inapplicableChoicesAreRefused() {
        app::PlanChoices c;
        c.arenas = {{"activations", 1024}};
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::DsaCsv),
                            FailureCode::InvalidArgument);
        c.arenas = {{"arena", 1024}};
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::IrJson),
                            FailureCode::InvalidArgument);
        c.arenas = {{"scratch", 1024}};
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::IrJson),
                            FailureCode::InvalidArgument);
        c.arenas.clear();
        c.routes = {{Role::Workspace, "scratch"}};
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::DsaCsv),
                            FailureCode::InvalidArgument);
        c.routes.clear();
        c.strategy = "magic";
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::IrJson),
                            FailureCode::InvalidArgument);
        c.strategy = "auto";
        c.alignment = 48;
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::IrJson),
                            FailureCode::AlignmentViolation);
        c.alignment = 0;
        // A page size: a power of two, set on its arena alone.
        c.arenas = {{"activations", std::nullopt, std::nullopt, 3 << 20}};
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::IrJson),
                            FailureCode::InvalidArgument);
        c.arenas = {{"activations", uint64_t(1) << 30, std::nullopt, 2 << 20}};
        const PlanOptions paged = app::make_plan_options(c, ModelKind::IrJson);
        QCOMPARE(paged.policy.find("activations")->page_size, uint64_t(2) << 20);
        QCOMPARE(paged.policy.find("activations")->capacity, uint64_t(1) << 30);
        QCOMPARE(paged.policy.find("parameters")->page_size, uint64_t(0));
        // A page larger than the capacity leaves no whole page to plan into; one page fits.
        c.arenas = {{"activations", uint64_t(1) << 20, std::nullopt, 2 << 20}};
        const auto larger =
            test::capture_failure([&] { app::make_plan_options(c, ModelKind::IrJson); });
        QVERIFY(larger && larger->code() == FailureCode::InvalidArgument);
        QCOMPARE(QString::fromStdString(larger->where()), QStringLiteral("--arena activations"));
        QVERIFY2(std::string(larger->what())
                         .find("page size 2097152 is larger than the capacity "
                               "1048576") != std::string::npos,
                 larger->what());
        c.arenas = {{"activations", uint64_t(2) << 20, std::nullopt, 2 << 20}};
        QCOMPARE(app::make_plan_options(c, ModelKind::IrJson).policy.find("activations")->page_size,
                 uint64_t(2) << 20);
    }

    void routesMakeArenasThatCapacitiesMayName() {
        app::PlanChoices c;
        c.routes = {{Role::Workspace, "scratch"}};
        c.arenas = {{"scratch", 4096}};
        const PlanOptions o = app::make_plan_options(c, ModelKind::IrJson);
        QCOMPARE(o.policy.arena_of_role[size_t(Role::Workspace)], std::string("scratch"));
        QVERIFY(o.policy.find("scratch"));
        QCOMPARE(o.policy.find("scratch")->capacity, uint64_t(4096));
        QCOMPARE(o.policy.find("scratch")->alignment, uint64_t(128));
    }

    // Seed 000 I.B: each arena has its own alignment. An arena's setting overrides --align there
    // and nowhere else; one that gives only an alignment leaves the capacity unbounded.
    void arenasTakeTheirOwnAlignment() {
        app::PlanChoices c;
        c.alignment = 64;
        c.arenas = {{"parameters", std::nullopt, 4096}, {"activations", 1 << 20, 256}};
        PlanOptions o = app::make_plan_options(c, ModelKind::IrJson);
        QCOMPARE(o.policy.find("parameters")->alignment, uint64_t(4096));
        QCOMPARE(o.policy.find("parameters")->capacity, UINT64_MAX);
        QCOMPARE(o.policy.find("activations")->alignment, uint64_t(256));
        QCOMPARE(o.policy.find("activations")->capacity, uint64_t(1 << 20));
        QCOMPARE(o.policy.find("gradients")->alignment, uint64_t(64));
        QCOMPARE(o.policy.find("optimizer")->alignment, uint64_t(64));
        // A routed arena of its own, and the one arena of an offset problem.
        c.arenas = {{"scratch", std::nullopt, 32}};
        c.routes = {{Role::Workspace, "scratch"}};
        o = app::make_plan_options(c, ModelKind::IrJson);
        QCOMPARE(o.policy.find("scratch")->alignment, uint64_t(32));
        QCOMPARE(o.policy.find("scratch")->capacity, UINT64_MAX);
        c.routes.clear();
        c.arenas = {{"arena", std::nullopt, 8}};
        o = app::make_plan_options(c, ModelKind::DsaCsv);
        QCOMPARE(o.policy.find("arena")->alignment, uint64_t(8));
    }

    void badArenaSettingsAreRefusedByName() {
        app::PlanChoices c;
        for (uint64_t bad : {uint64_t(0), uint64_t(48)}) {
            c.arenas = {{"activations", std::nullopt, bad}};
            const auto f =
                test::capture_failure([&] { app::make_plan_options(c, ModelKind::IrJson); });
            QVERIFY(f && f->code() == FailureCode::AlignmentViolation);
            QCOMPARE(f->where(), std::string("--arena activations"));
        }
        // A second setting for one arena would silently replace the first.
        c.arenas = {{"activations", 1024}, {"activations", std::nullopt, 256}};
        const auto f = test::capture_failure([&] { app::make_plan_options(c, ModelKind::IrJson); });
        QVERIFY(f && f->code() == FailureCode::InvalidArgument);
        QVERIFY2(f->message().find("given twice") != std::string::npos, f->what());
        c.arenas = {{"activations"}}; // nothing to set: a setting that does nothing is refused
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::IrJson),
                            FailureCode::InvalidArgument);
        c.arenas = {{"nowhere", std::nullopt, 256}};
        TMMU_EXPECT_FAILURE(app::make_plan_options(c, ModelKind::IrJson),
                            FailureCode::InvalidArgument);
    }

    // New arenas are created capacities first, then routes, in the order given: the arena order
    // is part of the plan and its hash, so it must not move.
    void newArenasKeepTheirOrder() {
        app::PlanChoices c;
        c.arenas = {{"second", 2048}, {"first", 1024}};
        c.routes = {{Role::Workspace, "first"}, {Role::Gradient, "second"}, {Role::Input, "third"}};
        const PlanOptions o = app::make_plan_options(c, ModelKind::IrJson);
        std::vector<std::string> names;
        for (const ArenaConfig& a : o.policy.arenas)
            names.push_back(a.name);
        QCOMPARE(names, (std::vector<std::string>{"parameters", "activations", "gradients",
                                                  "optimizer", "second", "first", "third"}));
    }

    // A second route for a role would silently replace the first.
    void aRoleRoutedTwiceIsRefused() {
        app::PlanChoices c;
        c.routes = {{Role::Workspace, "scratch"},
                    {Role::Gradient, "grads"},
                    {Role::Workspace, "activations"}};
        const auto f = test::capture_failure([&] { app::make_plan_options(c, ModelKind::IrJson); });
        QVERIFY(f && f->code() == FailureCode::InvalidArgument);
        QCOMPARE(f->where(), std::string("--route workspace"));
        QVERIFY2(f->message().find("given twice (to scratch and to activations)") !=
                     std::string::npos,
                 f->what());
    }

    void budgetsAndTokensPassThrough() {
        app::PlanChoices c;
        app::parse_budget("250ms", c, "--budget");
        QCOMPARE(c.search_budget_ms, uint64_t(250));
        app::parse_budget("400000", c, "--budget");
        QCOMPARE(c.search_budget, uint64_t(400000));
        c.replay_token[0] = 0xAB;
        c.strategy = "optimal";
        const PlanOptions o = app::make_plan_options(c, ModelKind::IrJson);
        QCOMPARE(o.search_budget, uint64_t(400000));
        QCOMPARE(o.search_budget_ms, uint64_t(250));
        QCOMPARE(o.replay_token[0], uint8_t(0xAB));
        for (const char* bad : {"", "0", "ms", "12x", "-5", "5 ms"})
            TMMU_EXPECT_FAILURE(app::parse_budget(bad, c, "--budget"),
                                FailureCode::InvalidArgument);
    }

    // A budget only means something to the search: with a heuristic it would be silently
    // ignored, so it is an error naming the strategy.
    void budgetWithAHeuristicIsAnError() {
        app::PlanChoices c;
        app::parse_budget("1000", c, "--budget");
        for (const char* heuristic : {"auto", "slots", "greedy-size"}) {
            c.strategy = heuristic;
            auto f = test::capture_failure([&] { app::make_plan_options(c, ModelKind::IrJson); });
            QVERIFY2(f && f->code() == FailureCode::InvalidArgument, heuristic);
            QVERIFY2(std::string(f->what()).find(heuristic) != std::string::npos, f->what());
        }
    }

    // An offset problem has one arena: the options (and so recorded sessions) hold just it.
    void problemsHaveOneArena() {
        app::PlanChoices c;
        c.arenas.push_back({"arena", 4096});
        const PlanOptions o = app::make_plan_options(c, ModelKind::DsaCsv);
        QCOMPARE(o.policy.arenas.size(), size_t(1));
        QCOMPARE(o.policy.arenas[0].name, std::string("arena"));
        QCOMPARE(o.policy.arenas[0].capacity, uint64_t(4096));
        QCOMPARE(o.policy.arenas[0].alignment, uint64_t(1));
        for (const std::string& arena : o.policy.arena_of_role)
            QCOMPARE(arena, std::string("arena"));
    }

    void textFormsParseOrSayWhatIsWrong() {
        using Setting = app::ArenaSetting;
        QCOMPARE(app::parse_arena_setting("activations=8GiB", "--arena"),
                 (Setting{"activations", uint64_t(8) << 30, std::nullopt}));
        QCOMPARE(app::parse_arena_setting("activations=8GiB:256", "--arena"),
                 (Setting{"activations", uint64_t(8) << 30, 256}));
        QCOMPARE(app::parse_arena_setting("parameters=:4KiB", "--arena"),
                 (Setting{"parameters", std::nullopt, 4096}));
        QCOMPARE(app::format_arena_setting({"a", (uint64_t(3) << 40) + 1024, 96}),
                 std::string("a=3221225473KiB:96"));
        // A page size: the third part, alone or with the others.
        QCOMPARE(app::parse_arena_setting("activations=8GiB::2MiB", "--arena"),
                 (Setting{"activations", uint64_t(8) << 30, std::nullopt, 2 << 20}));
        QCOMPARE(app::parse_arena_setting("activations=::64KiB", "--arena"),
                 (Setting{"activations", std::nullopt, std::nullopt, 64 << 10}));
        QCOMPARE(app::format_arena_setting({"a", std::nullopt, 256, 2 << 20}),
                 std::string("a=:256:2MiB"));
        for (const Setting& s :
             {Setting{"a", 1, std::nullopt}, Setting{"a", 1, 2}, Setting{"a", std::nullopt, 2},
              Setting{"a", UINT64_MAX, 1 << 30}, Setting{"a", uint64_t(5) << 40, 3 << 20},
              Setting{"a", 1, std::nullopt, 4096}, Setting{"a", std::nullopt, 8, 1 << 21}})
            QCOMPARE(app::parse_arena_setting(app::format_arena_setting(s), "--arena"), s);
        for (const char* bad : {"activations", "=8GiB", "activations=", "activations=lots",
                                "activations=:", "activations=8GiB:", "activations=1:2:3:4",
                                "activations=::", "activations=8GiB::", "activations=::0",
                                "activations=8GiB:lots", ":256", "activations=:0"})
            TMMU_EXPECT_FAILURE(app::parse_arena_setting(bad, "--arena"),
                                FailureCode::InvalidArgument);
        const auto route = app::parse_route("gradient=activations", "--route");
        QCOMPARE(route.first, Role::Gradient);
        QCOMPARE(route.second, std::string("activations"));
        for (const char* bad : {"gradient", "gradients=activations", "gradient=",
                                "workspace=my scratch", "workspace=a,b", "workspace=a=b"})
            TMMU_EXPECT_FAILURE(app::parse_route(bad, "--route"), FailureCode::InvalidArgument);
        for (const char* spec : {"workspace=scratch", "optimizer_state=opt-2.bf16"})
            QCOMPARE(app::format_route(app::parse_route(spec, "--route")), std::string(spec));
        TMMU_EXPECT_FAILURE(app::parse_arena_setting("my:arena=8GiB", "--arena"),
                            FailureCode::InvalidArgument);
        QCOMPARE(app::parse_shard_roles("optimizer_state, parameter;gradient", "--shard"),
                 (std::vector<Role>{Role::Parameter, Role::Gradient, Role::OptimizerState}));
        for (const char* bad : {"", ",", "output", "workspace", "params", "parameter,parameter"})
            TMMU_EXPECT_FAILURE(app::parse_shard_roles(bad, "--shard"),
                                FailureCode::InvalidArgument);
        QCOMPARE(app::parse_world_size("4294967295", "--world-size"), UINT32_MAX);
        QCOMPARE(app::parse_rank("0", "--rank"), 0u);
        for (const char* bad : {"", "-1", "one", "4294967295", "1 "})
            TMMU_EXPECT_FAILURE(app::parse_rank(bad, "--rank"), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(app::parse_world_size("4294967296", "--world-size"),
                            FailureCode::InvalidArgument);
        QCOMPARE(app::parse_mode_choice("backward", "--mode"), Mode::Training);
        TMMU_EXPECT_FAILURE(app::parse_mode_choice("sideways", "--mode"),
                            FailureCode::InvalidArgument);
        QCOMPARE(app::parse_positive("16", "--seq"), uint64_t(16));
        for (const char* bad : {"0", "", "-1", "1e3", "18446744073709551616"})
            TMMU_EXPECT_FAILURE(app::parse_positive(bad, "--seq"), FailureCode::InvalidArgument);
        QCOMPARE(app::parse_strategy("ffd", "--strategy"), std::string("ffd"));
        const auto f = test::capture_failure([] { app::parse_strategy("magic", "--strategy"); });
        QVERIFY(f.has_value());
        QVERIFY2(f->message().find("optimal") != std::string::npos, f->what()); // lists them
    }

    void resourcesComeFromTheEnvironmentFirst() {
        qputenv("TMMU_RESOURCES", "/somewhere/else");
        QCOMPARE(app::resource_dir(), std::string("/somewhere/else"));
        QCOMPARE(app::default_model_path(), std::string("/somewhere/else/models/gpt2-small.json"));
        qunsetenv("TMMU_RESOURCES");
        QVERIFY(app::resource_dir() != "/somewhere/else");
    }
};

QTEST_GUILESS_MAIN(TestPlanChoices)
#include "test_plan_choices.moc"
