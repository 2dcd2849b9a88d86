// Tests hwloc discovery and recorded-XML loading against figures checked in each XML file.
#include "common/topology/discover.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cohort::topology {
namespace {

namespace fs = std::filesystem;

// Paths are relative to the repository root, the tests' working directory.
const std::string kSharedDir = "../shared/data/topologies";
const std::string kLocalDir = "tests/data/topologies";

// Invariants every topology must satisfy, whatever machine it describes.
void expect_sane(const NodeTopology& t) {
    EXPECT_GE(t.sockets, 1);
    EXPECT_GE(t.cores, t.sockets);
    EXPECT_GE(t.pus, t.cores);
    ASSERT_FALSE(t.numa_nodes.empty());

    // Each PU belongs to exactly one NUMA node, so summing per-node CPUs never double-counts.
    std::set<int> pus;
    std::set<int> numa_ids;
    std::set<int> cpu_numa_ids;
    int64_t numa_memory_mib = 0;
    for (const NumaNode& n : t.numa_nodes) {
        EXPECT_TRUE(numa_ids.insert(n.os_index).second) << "NUMA node " << n.os_index << " twice";
        if (!n.cpus.empty()) {
            cpu_numa_ids.insert(n.os_index);
        }
        for (int cpu : n.cpus) {
            EXPECT_TRUE(pus.insert(cpu).second) << "PU " << cpu << " in two NUMA nodes";
        }
        EXPECT_GE(n.memory_mib, 0);
        numa_memory_mib += n.memory_mib;
    }
    EXPECT_TRUE(std::is_sorted(numa_ids.begin(), numa_ids.end()));
    EXPECT_EQ(static_cast<int>(pus.size()), t.pus);
    EXPECT_GE(t.memory_mib, 0);
    // Per-node figures are rounded down to MiB; the total may exclude GPU memory nodes.
    EXPECT_LE(t.memory_mib, numa_memory_mib + static_cast<int64_t>(t.numa_nodes.size()));

    const std::regex bus_id("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
    for (size_t i = 0; i < t.gpus.size(); ++i) {
        const Gpu& g = t.gpus[i];
        EXPECT_EQ(g.index, static_cast<int>(i));
        EXPECT_TRUE(std::regex_match(g.pci_bus_id, bus_id)) << g.pci_bus_id;
        if (i > 0) {
            EXPECT_LE(t.gpus[i - 1].pci_bus_id, g.pci_bus_id) << "GPUs not in PCI bus order";
        }
        const std::set<std::string> vendors = {"nvidia", "amd", "intel", "nec"};
        EXPECT_EQ(vendors.count(g.vendor), 1U) << g.vendor;
        EXPECT_FALSE(g.model.empty());
        EXPECT_TRUE(g.numa == -1 || cpu_numa_ids.count(g.numa) == 1) << "GPU numa " << g.numa;
        EXPECT_GE(g.socket, -1);
        EXPECT_LT(g.socket, t.sockets);
        EXPECT_FALSE(g.local_cpus.empty());
        for (int cpu : g.local_cpus) {
            EXPECT_EQ(pus.count(cpu), 1U) << "GPU local CPU " << cpu << " is not a PU";
        }
    }
    for (const Nic& n : t.nics) {
        EXPECT_FALSE(n.name.empty());
        EXPECT_TRUE(n.numa == -1 || numa_ids.count(n.numa) == 1) << n.name << " numa " << n.numa;
    }
}

std::vector<int> gpu_numas(const NodeTopology& t) {
    std::vector<int> out;
    for (const Gpu& g : t.gpus) {
        out.push_back(g.numa);
    }
    return out;
}

std::vector<int> gpu_sockets(const NodeTopology& t) {
    std::vector<int> out;
    for (const Gpu& g : t.gpus) {
        out.push_back(g.socket);
    }
    return out;
}

std::vector<const Nic*> nics_named(const NodeTopology& t, const std::string& prefix) {
    std::vector<const Nic*> out;
    for (const Nic& n : t.nics) {
        if (n.name.rfind(prefix, 0) == 0) {
            out.push_back(&n);
        }
    }
    return out;
}

int cpu_bearing_numa_nodes(const NodeTopology& t) {
    return static_cast<int>(std::count_if(t.numa_nodes.begin(), t.numa_nodes.end(),
                                          [](const NumaNode& n) { return !n.cpus.empty(); }));
}

TEST(DiscoverLocal, FindsThisMachine) {
    Result<NodeTopology> t = discover_local_topology();
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_GE(t->pus, 1);
    EXPECT_GE(t->cores, 1);
    EXPECT_GT(t->memory_mib, 0);
    EXPECT_GE(t->numa_nodes.size(), 1U);
    expect_sane(*t);
}

// Checked-in copies: these never skip.

TEST(LoadTopologyXml, HopperBoxCountsOneGpuPerPciFunctionAndNoBmcOrDsa) {
    Result<NodeTopology> t = load_topology_xml(kLocalDir + "/fluxcore-ipa20.xml");
    ASSERT_TRUE(t) << t.status().message();
    expect_sane(*t);
    EXPECT_EQ(t->sockets, 2);
    EXPECT_EQ(t->cores, 112);
    EXPECT_EQ(t->pus, 224);
    EXPECT_EQ(t->numa_nodes.size(), 8U);
    // 4 H100 with cuda+nvml+opencl each; Matrox 102b:0536 and 8086 class 0b40 are left out.
    ASSERT_EQ(t->gpus.size(), 4U);
    for (const Gpu& g : t->gpus) {
        EXPECT_EQ(g.vendor, "nvidia");
        EXPECT_EQ(g.model, "NVIDIA H100 80GB HBM3");
        EXPECT_EQ(g.local_cpus.size(), 28U);  // one SNC4 NUMA node of 14 cores x 2 threads
    }
    EXPECT_EQ(t->gpus[0].pci_bus_id, "0000:4e:00.0");
    EXPECT_EQ(t->gpus[3].pci_bus_id, "0000:db:00.0");
    EXPECT_EQ(gpu_numas(*t), (std::vector<int>{3, 1, 7, 5}));
    EXPECT_EQ(gpu_sockets(*t), (std::vector<int>{0, 0, 1, 1}));
    std::vector<const Nic*> hcas = nics_named(*t, "mlx5_");
    ASSERT_EQ(hcas.size(), 4U);
    EXPECT_EQ(hcas[0]->name, "mlx5_0");
    EXPECT_EQ(hcas[0]->numa, 3);
    EXPECT_EQ(hcas[0]->pci_bus_id, "0000:4d:00.0");
    // The netdev of an RDMA port (hsi0 beside mlx5_0) is not a second NIC.
    EXPECT_TRUE(nics_named(*t, "hsi").empty());
    EXPECT_TRUE(nics_named(*t, "ibp").empty());
}

TEST(LoadTopologyXml, JuwelsBoosterPairsEachGpuWithTheHcaOfItsNumaNode) {
    Result<NodeTopology> t = load_topology_xml(kLocalDir + "/psmgmt-jwb0001.xml");
    ASSERT_TRUE(t) << t.status().message();
    expect_sane(*t);
    EXPECT_EQ(t->sockets, 2);
    EXPECT_EQ(t->cores, 48);
    EXPECT_EQ(t->pus, 96);
    EXPECT_EQ(t->numa_nodes.size(), 8U);
    EXPECT_EQ(t->memory_mib, 515549);
    // GPUs are bare PCI functions in this v1 file; the ASPEED BMC VGA is not one of them.
    ASSERT_EQ(t->gpus.size(), 4U);
    for (const Gpu& g : t->gpus) {
        EXPECT_EQ(g.model, "10de:20b0");
    }
    EXPECT_EQ(gpu_numas(*t), (std::vector<int>{3, 1, 7, 5}));
    EXPECT_EQ(gpu_sockets(*t), (std::vector<int>{0, 0, 1, 1}));
    std::vector<const Nic*> hcas = nics_named(*t, "mlx5_");
    ASSERT_EQ(hcas.size(), 4U);
    for (const Gpu& g : t->gpus) {
        EXPECT_EQ(std::count_if(hcas.begin(), hcas.end(),
                                [&](const Nic* n) { return n->numa == g.numa; }),
                  1)
                << "GPU " << g.index << " on NUMA " << g.numa;
    }
}

TEST(LoadTopologyXml, GpuMemoryNumaNodesHaveNoCpusAndAreNotHostMemory) {
    Result<NodeTopology> t =
            load_topology_xml(kLocalDir + "/hwloc-linux-nvidiagpunumanodes-kept.xml");
    ASSERT_TRUE(t) << t.status().message();
    expect_sane(*t);
    EXPECT_EQ(t->sockets, 2);
    EXPECT_EQ(t->cores, 8);
    EXPECT_EQ(t->pus, 32);
    ASSERT_EQ(t->numa_nodes.size(), 8U);
    EXPECT_EQ(t->numa_nodes[0].os_index, 0);
    EXPECT_EQ(t->numa_nodes[0].cpus.size(), 16U);
    EXPECT_EQ(t->numa_nodes[1].os_index, 8);
    EXPECT_EQ(t->numa_nodes[1].cpus.size(), 16U);
    for (size_t i = 2; i < t->numa_nodes.size(); ++i) {
        EXPECT_EQ(t->numa_nodes[i].os_index, 248 + static_cast<int>(i));
        EXPECT_TRUE(t->numa_nodes[i].cpus.empty());
        EXPECT_EQ(t->numa_nodes[i].memory_mib, 15360);
    }
    EXPECT_EQ(t->memory_mib, t->numa_nodes[0].memory_mib + t->numa_nodes[1].memory_mib);
    // The dump zeroed the PCI ids: a VGA function of vendor 0000 could be a BMC, so none count.
    EXPECT_TRUE(t->gpus.empty());
}

TEST(LoadTopologyXml, MissingFileNamesThePath) {
    const std::string path = kLocalDir + "/no-such-node.xml";
    Result<NodeTopology> t = load_topology_xml(path);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), StatusCode::kIoError);
    EXPECT_EQ(t.status().message(),
              "cannot read topology '" + path + "': No such file or directory");
}

TEST(LoadTopologyXml, DirectoryIsNotATopology) {
    Result<NodeTopology> t = load_topology_xml(kLocalDir);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), StatusCode::kIoError);
    EXPECT_EQ(t.status().message(), "cannot read topology '" + kLocalDir + "': Is a directory");
}

TEST(LoadTopologyXml, NonXmlFileIsRejectedWithTheReason) {
    const std::string path = kLocalDir + "/SOURCES.md";
    Result<NodeTopology> t = load_topology_xml(path);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(t.status().message().find("cannot load topology '" + path + "': "), std::string::npos)
            << t.status().message();
    EXPECT_NE(t.status().message().find("not an hwloc XML export"), std::string::npos)
            << t.status().message();
}

TEST(LoadTopologyXml, FormatThreeExportSaysWhichFormatItIs) {
    const std::string path = ::testing::TempDir() + "/cohort-topology-v3.xml";
    std::ofstream(path) << "<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n</topology>\n";
    Result<NodeTopology> t = load_topology_xml(path);
    fs::remove(path);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(t.status().message().find("hwloc XML format 3.0"), std::string::npos)
            << t.status().message();
}

// The full recorded set in ../shared/data/topologies, described in its SOURCES.md.

class SharedTopologies : public ::testing::Test {
protected:
    void SetUp() override {
        if (!fs::is_directory(kSharedDir)) {
            GTEST_SKIP() << kSharedDir << " not found (tests run from the repo root, with "
                         << "shared/ beside it); recorded-topology checks skipped";
        }
    }

    static Result<NodeTopology> load(const std::string& file) {
        return load_topology_xml(kSharedDir + "/" + file);
    }
};

TEST_F(SharedTopologies, EveryRecordedXmlLoadsAndIsSane) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(kSharedDir)) {
        if (e.path().extension() == ".xml") {
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    ASSERT_FALSE(files.empty()) << "no *.xml in " << kSharedDir;
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        Result<NodeTopology> t = load_topology_xml(file.string());
        ASSERT_TRUE(t) << t.status().message();
        expect_sane(*t);
    }
}

// Figures from SOURCES.md, each checked with hwloc-info and grep on the file itself. NICs
// count RDMA devices plus netdevs of ports without one (Ethernet included), plus InfiniBand
// functions whose driver exposes no device at all (the single-root box's two HCAs).
struct Figures {
    const char* file;
    int sockets;
    int cores;
    int pus;
    int numa;
    int cpu_numa;  // NUMA nodes that own CPUs
    int gpus;
    int nics;
};

constexpr Figures kFigures[] = {
        {"fluxcore-ipa20.xml", 2, 112, 224, 8, 8, 4, 6},
        {"fluxcore-tuo-CPX.xml", 4, 96, 192, 4, 4, 24, 5},
        {"fluxcore-tuo-SPX.xml", 4, 96, 192, 4, 4, 4, 5},
        {"hwloc-16amd64-4distances.xml", 8, 16, 16, 8, 8, 0, 0},
        {"hwloc-192em64t-24n8c2t.xml", 24, 192, 384, 24, 24, 0, 7},
        {"hwloc-32em64t-2n8c2t-pci-wholeio.xml", 2, 16, 32, 2, 2, 4, 3},
        {"hwloc-linux-256ia64-64n2s2c.xml", 128, 256, 256, 64, 64, 0, 0},
        {"hwloc-linux-32intel64-2p8co2t+8ve.xml", 2, 16, 32, 2, 2, 8, 4},
        {"hwloc-linux-nvidiagpunumanodes-kept.xml", 2, 8, 32, 8, 2, 0, 0},
        {"hwloc-nvidiaDGX2.xml", 2, 4, 4, 2, 2, 16, 0},
        {"hwloc-power8gpudistances.xml", 2, 8, 16, 2, 2, 4, 0},
        {"hwloc-x86-AMD-Zen4-2xEpyc-9654.xml", 2, 192, 384, 2, 2, 0, 0},
        {"hwloc-x86-Intel-SPR-2xXeonMax9460.xml", 2, 80, 160, 1, 1, 0, 0},
        {"mpibind-coral-lassen.xml", 2, 40, 160, 2, 2, 4, 6},
        {"mpibind-eas-tioga.xml", 1, 64, 128, 4, 4, 8, 5},
        {"mpibind-epyc-corona-p2.xml", 2, 48, 96, 2, 2, 8, 3},
        {"mpibind-g4dnmetal.xml", 2, 48, 96, 2, 2, 8, 2},
        {"mpibind-knl-snc4-flat-hwloc1.xml", 1, 68, 272, 8, 4, 0, 3},
        {"psmgmt-dp-intelmax01-flat.xml", 2, 64, 128, 16, 8, 0, 3},
        {"psmgmt-jwb0001.xml", 2, 48, 96, 8, 8, 4, 6},
};

TEST_F(SharedTopologies, FiguresMatchTheRecordedMachines) {
    for (const Figures& f : kFigures) {
        SCOPED_TRACE(f.file);
        Result<NodeTopology> t = load(f.file);
        ASSERT_TRUE(t) << t.status().message();
        EXPECT_EQ(t->sockets, f.sockets);
        EXPECT_EQ(t->cores, f.cores);
        EXPECT_EQ(t->pus, f.pus);
        EXPECT_EQ(static_cast<int>(t->numa_nodes.size()), f.numa);
        EXPECT_EQ(cpu_bearing_numa_nodes(*t), f.cpu_numa);
        EXPECT_EQ(static_cast<int>(t->gpus.size()), f.gpus);
        EXPECT_EQ(static_cast<int>(t->nics.size()), f.nics);
    }
}

TEST_F(SharedTopologies, Dgx2HasSixteenV100sEightPerSocketAndNoNvSwitchGpus) {
    Result<NodeTopology> t = load("hwloc-nvidiaDGX2.xml");
    ASSERT_TRUE(t) << t.status().message();
    ASSERT_EQ(t->gpus.size(), 16U);  // the 12 NVSwitch bridges (class 0680) are not GPUs
    for (const Gpu& g : t->gpus) {
        EXPECT_EQ(g.vendor, "nvidia");
        EXPECT_EQ(g.model, "Tesla V100-SXM3-32GB-H");
        EXPECT_EQ(g.socket, g.index < 8 ? 0 : 1);
        EXPECT_EQ(g.numa, g.index < 8 ? 0 : 1);
    }
    EXPECT_EQ(t->gpus.front().pci_bus_id, "0000:34:00.0");
    EXPECT_EQ(t->gpus.back().pci_bus_id, "0000:e7:00.0");
}

TEST_F(SharedTopologies, BmcGraphicsIsNeverAGpu) {
    // ASPEED 1a03:2000 or Matrox 102b:05xx VGA, and no accelerator.
    for (const char* file : {"hwloc-192em64t-24n8c2t.xml", "mpibind-knl-snc4-flat-hwloc1.xml",
                             "psmgmt-dp-intelmax01-flat.xml"}) {
        SCOPED_TRACE(file);
        Result<NodeTopology> t = load(file);
        ASSERT_TRUE(t) << t.status().message();
        EXPECT_TRUE(t->gpus.empty());
    }
    // Next to real GPUs the BMC adapter is still left out.
    Result<NodeTopology> lassen = load("mpibind-coral-lassen.xml");
    ASSERT_TRUE(lassen) << lassen.status().message();
    ASSERT_EQ(lassen->gpus.size(), 4U);
    EXPECT_EQ(gpu_numas(*lassen), (std::vector<int>{0, 0, 8, 8}));
    EXPECT_EQ(nics_named(*lassen, "mlx5_").size(), 4U);
}

// An HP ProLiant-class board's console VGA is an old ATI chip (ES1000, 1002:515e): the AMD
// vendor id and the VGA class, and still not a GPU. The whole-I/O box's Radeon becomes one.
TEST_F(SharedTopologies, AtiServerConsoleGraphicsIsNeverAGpu) {
    std::ifstream in(kSharedDir + "/hwloc-32em64t-2n8c2t-pci-wholeio.xml");
    std::string xml((std::istreambuf_iterator<char>(in)), {});
    const std::string radeon = "pci_type=\"0300 [1002:6798] [174b:e208]";
    const size_t at = xml.find(radeon);
    ASSERT_NE(at, std::string::npos);
    xml.replace(at, radeon.size(), "pci_type=\"0300 [1002:515e] [103c:31fb]");
    const std::string file = ::testing::TempDir() + "proliant-es1000.xml";
    std::ofstream(file) << xml;

    Result<NodeTopology> t = load_topology_xml(file);
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ(t->gpus.size(), 3U);  // the 3 Tesla M2075 alone
    for (const Gpu& g : t->gpus) {
        EXPECT_EQ(g.vendor, "nvidia");
    }
    std::remove(file.c_str());
}

TEST_F(SharedTopologies, MixedVendorsAndDisplayOtherClassCount) {
    Result<NodeTopology> whole_io = load("hwloc-32em64t-2n8c2t-pci-wholeio.xml");
    ASSERT_TRUE(whole_io) << whole_io.status().message();
    ASSERT_EQ(whole_io->gpus.size(), 4U);  // 3 Tesla M2075 + 1 Radeon; Matrox G200eW left out
    EXPECT_EQ(whole_io->gpus[3].vendor, "amd");
    EXPECT_EQ(whole_io->gpus[3].pci_bus_id, "0000:84:00.1");

    // MI250X GCDs and MI50s report PCI class 0380 ("display controller").
    Result<NodeTopology> tioga = load("mpibind-eas-tioga.xml");
    ASSERT_TRUE(tioga) << tioga.status().message();
    EXPECT_EQ(gpu_numas(*tioga), (std::vector<int>{3, 3, 1, 1, 0, 0, 2, 2}));
    std::vector<const Nic*> slingshot = nics_named(*tioga, "hsi");
    ASSERT_EQ(slingshot.size(), 4U);
    std::set<int> nic_numas;
    for (const Nic* n : slingshot) {
        nic_numas.insert(n->numa);
    }
    EXPECT_EQ(nic_numas, (std::set<int>{0, 1, 2, 3}));

    Result<NodeTopology> corona = load("mpibind-epyc-corona-p2.xml");
    ASSERT_TRUE(corona) << corona.status().message();
    EXPECT_EQ(gpu_sockets(*corona), (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST_F(SharedTopologies, SingleRootBoxHasAllEightAcceleratorsOnSocketZero) {
    Result<NodeTopology> t = load("hwloc-linux-32intel64-2p8co2t+8ve.xml");
    ASSERT_TRUE(t) << t.status().message();
    ASSERT_EQ(t->gpus.size(), 8U);  // NEC SX-Aurora VE 1bcf:001c, class 0b40
    for (const Gpu& g : t->gpus) {
        EXPECT_EQ(g.vendor, "nec");
        EXPECT_EQ(g.socket, 0);
        EXPECT_EQ(g.numa, 0);
    }
}

TEST_F(SharedTopologies, PartitionedApuGivesOneGpuPerPartition) {
    Result<NodeTopology> spx = load("fluxcore-tuo-SPX.xml");
    ASSERT_TRUE(spx) << spx.status().message();
    EXPECT_EQ(gpu_numas(*spx), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(gpu_sockets(*spx), (std::vector<int>{0, 1, 2, 3}));

    // CPX mode: each MI300A PCI function carries 6 rsmi devices, each schedulable.
    Result<NodeTopology> cpx = load("fluxcore-tuo-CPX.xml");
    ASSERT_TRUE(cpx) << cpx.status().message();
    ASSERT_EQ(cpx->gpus.size(), 24U);
    std::set<std::string> functions;
    for (const Gpu& g : cpx->gpus) {
        functions.insert(g.pci_bus_id);
        EXPECT_EQ(g.numa, g.index / 6);
    }
    EXPECT_EQ(functions.size(), 4U);
}

TEST_F(SharedTopologies, CpuidDumpsHaveBigCoreCountsButNoMemory) {
    Result<NodeTopology> zen4 = load("hwloc-x86-AMD-Zen4-2xEpyc-9654.xml");
    ASSERT_TRUE(zen4) << zen4.status().message();
    EXPECT_EQ(zen4->numa_nodes[0].cpus.size(), 192U);
    EXPECT_EQ(zen4->memory_mib, 0);  // cpuid sees no memory

    Result<NodeTopology> spr = load("hwloc-x86-Intel-SPR-2xXeonMax9460.xml");
    ASSERT_TRUE(spr) << spr.status().message();
    EXPECT_EQ(spr->numa_nodes[0].cpus.size(), 160U);
}

TEST_F(SharedTopologies, HbmAndMcdramNodesOwnNoCpus) {
    Result<NodeTopology> knl = load("mpibind-knl-snc4-flat-hwloc1.xml");
    ASSERT_TRUE(knl) << knl.status().message();
    for (const NumaNode& n : knl->numa_nodes) {
        EXPECT_EQ(n.cpus.empty(), n.os_index >= 4) << "NUMA " << n.os_index;
    }
    Result<NodeTopology> max = load("psmgmt-dp-intelmax01-flat.xml");
    ASSERT_TRUE(max) << max.status().message();
    for (const NumaNode& n : max->numa_nodes) {
        EXPECT_EQ(n.cpus.empty(), n.os_index >= 8) << "NUMA " << n.os_index;
        EXPECT_EQ(n.memory_mib < 20000, n.os_index >= 8) << "NUMA " << n.os_index;  // 16 GiB HBM
    }
}

}  // namespace
}  // namespace cohort::topology
