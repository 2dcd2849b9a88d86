// Tests the PCIe switch levels, GPU link matrix, cliques and GPU/NIC pairing on recorded
// topologies, and the `cohortd --show-topology` renderings.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/topology/discover.h"
#include "common/topology/gpu_links.h"
#include "common/topology/topology_report.h"

namespace cohort::topology {
namespace {

namespace fs = std::filesystem;

// Paths are relative to the repository root, the tests' working directory.
const std::string kSharedTopologies = "../shared/data/topologies";
const std::string kLocalTopologies = "tests/data/topologies";

std::string label(const NodeTopology& t, int a, int b) {
    return link_label(t.gpu_links[static_cast<size_t>(a)][static_cast<size_t>(b)]);
}

std::vector<int> cliques(const NodeTopology& t) {
    std::vector<int> out;
    for (const Gpu& g : t.gpus) {
        out.push_back(g.nvlink_clique);
    }
    return out;
}

std::string nic_of(const NodeTopology& t, int gpu) {
    const int nic = t.gpus[static_cast<size_t>(gpu)].closest_nic;
    return nic < 0 ? "" : t.nics[static_cast<size_t>(nic)].name;
}

// The matrix is symmetric with X on the diagonal only.
void expect_well_formed_matrix(const NodeTopology& t) {
    ASSERT_EQ(t.gpu_links.size(), t.gpus.size());
    for (size_t i = 0; i < t.gpus.size(); ++i) {
        ASSERT_EQ(t.gpu_links[i].size(), t.gpus.size());
        for (size_t j = 0; j < t.gpus.size(); ++j) {
            EXPECT_EQ(link_label(t.gpu_links[i][j]), link_label(t.gpu_links[j][i]));
            EXPECT_EQ(t.gpu_links[i][j].kind == LinkClass::kSelf, i == j);
        }
    }
}

// Checked-in copies: these never skip.

TEST(Connectivity, Dgx2GpusFormOneNvSwitchCliqueInNestedPcieSwitches) {
    Result<NodeTopology> t = load_topology_xml(kLocalTopologies + "/hwloc-nvidiaDGX2.xml");
    ASSERT_TRUE(t) << t.status().message();
    expect_well_formed_matrix(*t);
    EXPECT_EQ(t->link_source, LinkSource::kHwloc);
    // Each V100 has one NVLink to each of its baseboard's six NVSwitches: NV6, as nvidia-smi
    // shows on a DGX-2, also across baseboards (switch-to-switch links hwloc leaves out).
    for (int i = 0; i < 16; ++i) {
        EXPECT_EQ(t->gpus[static_cast<size_t>(i)].nvlink_clique, 0);
        for (int j = 0; j < 16; ++j) {
            EXPECT_EQ(label(*t, i, j), i == j ? "X" : "NV6") << i << "," << j;
        }
    }
    // Four PCIe trees of four GPUs, each two switches of a pair.
    for (const Gpu& g : t->gpus) {
        ASSERT_EQ(g.pcie_path.size(), 2U) << "GPU " << g.index;
        const Gpu& pair = t->gpus[static_cast<size_t>(g.index ^ 1)];
        const Gpu& other_pair = t->gpus[static_cast<size_t>(g.index ^ 2)];
        const Gpu& other_tree = t->gpus[static_cast<size_t>(g.index ^ 4)];
        EXPECT_EQ(g.pcie_path, pair.pcie_path);
        EXPECT_EQ(g.pcie_path[0], other_pair.pcie_path[0]);
        EXPECT_NE(g.pcie_path[1], other_pair.pcie_path[1]);
        EXPECT_NE(g.pcie_path[0], other_tree.pcie_path[0]);
        EXPECT_EQ(g.closest_nic, -1);  // this export kept no NIC
    }
    EXPECT_EQ(t->pcie_switches.size(), 12U);
}

TEST(Connectivity, Xe8640IsAnNvLinkMeshWithANicBehindThreeGpusSwitches) {
    Result<NodeTopology> t = load_topology_xml(kLocalTopologies + "/fluxcore-ipa20.xml");
    ASSERT_TRUE(t) << t.status().message();
    expect_well_formed_matrix(*t);
    // 150000 MB/s per pair = 6 NVLink-4 links at 25000 (HGX H100 4-GPU: NV6).
    EXPECT_EQ(label(*t, 0, 3), "NV6");
    EXPECT_EQ(cliques(*t), (std::vector<int>{0, 0, 0, 0}));
    EXPECT_EQ(nic_of(*t, 0), "mlx5_0");
    EXPECT_EQ(nic_of(*t, 1), "mlx5_2");
    EXPECT_EQ(nic_of(*t, 3), "mlx5_3");
    for (int g : {0, 1, 3}) {
        const Gpu& gpu = t->gpus[static_cast<size_t>(g)];
        const Nic& nic = t->nics[static_cast<size_t>(gpu.closest_nic)];
        ASSERT_FALSE(gpu.pcie_path.empty());
        EXPECT_EQ(nic.pcie_path.front(), gpu.pcie_path.front()) << "GPU " << g;
        EXPECT_EQ(nic.numa, gpu.numa);
    }
    // GPU 2's switch holds no NIC: the closest is on its socket, never an Ethernet port.
    const Gpu& lone = t->gpus[2];
    EXPECT_TRUE(lone.pcie_path.empty());
    const Nic& fallback = t->nics[static_cast<size_t>(lone.closest_nic)];
    EXPECT_TRUE(fallback.compute);
    EXPECT_EQ(fallback.socket, lone.socket);
}

TEST(Connectivity, SingleRootBoxPairsEachSwitchWithItsOwnHca) {
    Result<NodeTopology> t =
            load_topology_xml(kLocalTopologies + "/hwloc-linux-32intel64-2p8co2t+8ve.xml");
    ASSERT_TRUE(t) << t.status().message();
    expect_well_formed_matrix(*t);
    EXPECT_EQ(t->link_source, LinkSource::kPci);
    ASSERT_EQ(t->gpus.size(), 8U);
    for (int i = 0; i < 8; ++i) {
        const Gpu& g = t->gpus[static_cast<size_t>(i)];
        EXPECT_EQ(g.nvlink_clique, -1);
        ASSERT_EQ(g.pcie_path.size(), 1U);
        EXPECT_EQ(g.pcie_path, t->gpus[i < 4 ? 0 : 4].pcie_path);
        // The HCA functions have no driver here, so they go by their bus ids.
        EXPECT_EQ(nic_of(*t, i), i < 4 ? "0000:1a:00.0" : "0000:3e:00.0");
        const Nic& nic = t->nics[static_cast<size_t>(g.closest_nic)];
        EXPECT_EQ(nic.pcie_path, g.pcie_path);
        for (int j = 0; j < 8; ++j) {
            const bool same_switch = (i < 4) == (j < 4);
            EXPECT_EQ(label(*t, i, j), i == j ? "X" : same_switch ? "PIX" : "NODE");
        }
    }
    EXPECT_NE(t->gpus[0].pcie_path, t->gpus[4].pcie_path);
}

TEST(Connectivity, JuwelsBoosterGpuAndHcaShareARootPortSwitch) {
    Result<NodeTopology> t = load_topology_xml(kLocalTopologies + "/psmgmt-jwb0001.xml");
    ASSERT_TRUE(t) << t.status().message();
    expect_well_formed_matrix(*t);
    std::set<std::string> nics;
    for (const Gpu& g : t->gpus) {
        const Nic& nic = t->nics[static_cast<size_t>(g.closest_nic)];
        EXPECT_EQ(nic.pcie_path, g.pcie_path) << "GPU " << g.index;
        EXPECT_FALSE(g.pcie_path.empty());
        EXPECT_EQ(nic.numa, g.numa);
        nics.insert(nic.name);
        EXPECT_EQ(g.nvlink_clique, -1);  // no NVLink recorded in this file
    }
    EXPECT_EQ(nics.size(), 4U);
    EXPECT_EQ(label(*t, 0, 1), "SYS");  // NUMA 3 and 1 of one EPYC (NPS4)
}

TEST(Connectivity, CliquesSplitAPartialMeshIntoFullyLinkedGroups) {
    // DGX-1 (V100) hybrid cube mesh: 0-3 and 4-7 fully linked, plus i <-> i+4.
    std::vector<std::vector<LinkClass>> pci(8, std::vector<LinkClass>(8, LinkClass::kSys));
    std::vector<FabricLink> fabric;
    for (int a = 0; a < 8; ++a) {
        for (int b = 0; b < 8; ++b) {
            const bool same_quad = a != b && (a < 4) == (b < 4);
            if (same_quad || b == (a ^ 4)) {
                fabric.push_back({a, b, "", 1, LinkClass::kNvLink});
            }
        }
    }
    GpuLinkMatrix m = gpu_link_matrix(pci, fabric);
    EXPECT_EQ(m.cliques, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
    EXPECT_EQ(link_label(m.links[0][4]), "NV1");
    EXPECT_EQ(link_label(m.links[0][5]), "SYS");
}

TEST(Connectivity, SwitchLinksBondToTheSmallerCount) {
    std::vector<std::vector<LinkClass>> pci(3, std::vector<LinkClass>(3, LinkClass::kPhb));
    // GPU 0: 2 links to each of 6 switches (A100: NV12); GPU 1: 6 links; GPU 2: none.
    std::vector<FabricLink> fabric;
    for (int s = 0; s < 6; ++s) {
        fabric.push_back({0, -1, "sw" + std::to_string(s), 2, LinkClass::kNvLink});
        fabric.push_back({1, -1, "sw" + std::to_string(s), 1, LinkClass::kNvLink});
    }
    GpuLinkMatrix m = gpu_link_matrix(pci, fabric);
    EXPECT_EQ(link_label(m.links[0][1]), "NV6");
    EXPECT_EQ(link_label(m.links[0][2]), "PHB");
    EXPECT_EQ(m.cliques, (std::vector<int>{0, 0, -1}));
}

TEST(Connectivity, JsonHasTheKeysToolsReadAndTextShowsTheMatrix) {
    Result<NodeTopology> t = load_topology_xml(kLocalTopologies + "/fluxcore-ipa20.xml");
    ASSERT_TRUE(t) << t.status().message();
    const nlohmann::json j = nlohmann::json::parse(topology_json(*t));
    EXPECT_EQ(j.at("cores"), 112);
    EXPECT_EQ(j.at("pus"), 224);
    ASSERT_EQ(j.at("numa_nodes").size(), 8U);
    for (const char* key : {"os_index", "cpus", "memory_mib"}) {
        EXPECT_TRUE(j["numa_nodes"][0].contains(key)) << key;
    }
    ASSERT_EQ(j.at("gpus").size(), 4U);
    const nlohmann::json& g0 = j["gpus"][0];
    EXPECT_EQ(g0.at("index"), 0);
    EXPECT_EQ(g0.at("pci_bus_id"), "0000:4e:00.0");
    EXPECT_EQ(g0.at("vendor"), "nvidia");
    EXPECT_EQ(g0.at("model"), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g0.at("numa"), 3);
    EXPECT_EQ(g0.at("socket"), 0);
    EXPECT_EQ(g0.at("closest_nic"), "mlx5_0");
    EXPECT_EQ(g0.at("local_cpus").size(), 28U);
    EXPECT_TRUE(j.at("nics")[0].contains("name"));
    EXPECT_TRUE(j.at("nics")[0].contains("numa"));
    EXPECT_EQ(j.at("gpu_links")[0][0], "X");
    EXPECT_EQ(j.at("gpu_links")[0][1], "NV6");

    const std::string text = topology_text(*t);
    EXPECT_NE(text.find("GPU0    X      NV6    NV6    NV6    mlx5_0    3     42-55,154-167"),
              std::string::npos)
            << text;
    EXPECT_EQ(cpu_list({5, 0, 1, 2, 7, 8}), "0-2,5,7-8");
}

// The full recorded set in ../shared/data/topologies, described in its SOURCES.md.

class SharedConnectivity : public ::testing::Test {
protected:
    void SetUp() override {
        if (!fs::is_directory(kSharedTopologies)) {
            GTEST_SKIP() << kSharedTopologies << " not found (tests run from the repo root, with "
                         << "shared/ beside it); recorded-topology checks skipped";
        }
    }

    static Result<NodeTopology> load(const std::string& file) {
        return load_topology_xml(kSharedTopologies + "/" + file);
    }
};

TEST_F(SharedConnectivity, EveryRecordedXmlHasAConsistentMatrixAndNicPairing) {
    for (const fs::directory_entry& e : fs::directory_iterator(kSharedTopologies)) {
        if (e.path().extension() != ".xml") {
            continue;
        }
        SCOPED_TRACE(e.path().string());
        Result<NodeTopology> t = load_topology_xml(e.path().string());
        ASSERT_TRUE(t) << t.status().message();
        expect_well_formed_matrix(*t);
        const bool any_compute_nic =
                std::any_of(t->nics.begin(), t->nics.end(), [](const Nic& n) { return n.compute; });
        for (const Gpu& g : t->gpus) {
            EXPECT_EQ(g.closest_nic >= 0, any_compute_nic);
            if (g.closest_nic >= 0) {
                EXPECT_TRUE(t->nics[static_cast<size_t>(g.closest_nic)].compute);
            }
            for (int s : g.pcie_path) {
                ASSERT_LT(static_cast<size_t>(s), t->pcie_switches.size());
            }
        }
    }
}

TEST_F(SharedConnectivity, Power8LinksGpuPairsAndNotTheCpus) {
    Result<NodeTopology> t = load("hwloc-power8gpudistances.xml");
    ASSERT_TRUE(t) << t.status().message();
    // 40000 MB/s = two NVLink-1 links (20000 each), as on the Minsky's P100 pairs.
    EXPECT_EQ(label(*t, 0, 1), "NV2");
    EXPECT_EQ(label(*t, 2, 3), "NV2");
    EXPECT_EQ(label(*t, 0, 2), "SYS");
    EXPECT_EQ(cliques(*t), (std::vector<int>{0, 0, 1, 1}));
}

TEST_F(SharedConnectivity, AmdNodesLinkEveryGcdOverXgmiWithANicPerNumaNode) {
    for (const char* file :
         {"mpibind-eas-tioga.xml", "fluxcore-tuo-SPX.xml", "fluxcore-tuo-CPX.xml"}) {
        SCOPED_TRACE(file);
        Result<NodeTopology> t = load(file);
        ASSERT_TRUE(t) << t.status().message();
        for (const Gpu& g : t->gpus) {
            EXPECT_EQ(g.nvlink_clique, 0);
            EXPECT_EQ(t->nics[static_cast<size_t>(g.closest_nic)].numa, g.numa);
            EXPECT_EQ(nic_of(*t, g.index).rfind("hsi", 0), 0U);
        }
        EXPECT_EQ(label(*t, 0, 1), "XGMI");
    }
}

TEST_F(SharedConnectivity, PcieOnlyBoxesClassifyPairsByHostBridgeAndNuma) {
    Result<NodeTopology> g4dn = load("mpibind-g4dnmetal.xml");
    ASSERT_TRUE(g4dn) << g4dn.status().message();
    EXPECT_EQ(label(*g4dn, 0, 1), "PHB");   // pairs share a host bridge
    EXPECT_EQ(label(*g4dn, 0, 2), "NODE");  // same socket, other host bridge
    EXPECT_EQ(label(*g4dn, 0, 4), "SYS");
    EXPECT_EQ(nic_of(*g4dn, 0), "rdmap197s0");  // the one EFA, on socket 1

    // Corona: each MI50 behind its own bridges, which are no shared switch.
    Result<NodeTopology> corona = load("mpibind-epyc-corona-p2.xml");
    ASSERT_TRUE(corona) << corona.status().message();
    for (const Gpu& g : corona->gpus) {
        EXPECT_TRUE(g.pcie_path.empty()) << "GPU " << g.index;
        EXPECT_EQ(g.nvlink_clique, -1);
    }
    EXPECT_EQ(label(*corona, 0, 1), "NODE");
    EXPECT_EQ(label(*corona, 0, 4), "SYS");

    Result<NodeTopology> whole_io = load("hwloc-32em64t-2n8c2t-pci-wholeio.xml");
    ASSERT_TRUE(whole_io) << whole_io.status().message();
    EXPECT_EQ(label(*whole_io, 2, 3), "PIX");
    EXPECT_EQ(label(*whole_io, 1, 2), "PHB");
    EXPECT_EQ(label(*whole_io, 0, 1), "SYS");

    Result<NodeTopology> lassen = load("mpibind-coral-lassen.xml");
    ASSERT_TRUE(lassen) << lassen.status().message();
    EXPECT_EQ(nic_of(*lassen, 0), "mlx5_0");
    EXPECT_EQ(nic_of(*lassen, 1), "mlx5_1");  // the card's second port, not a shared one
    EXPECT_EQ(nic_of(*lassen, 2), "mlx5_2");
    EXPECT_EQ(nic_of(*lassen, 3), "mlx5_3");
}

}  // namespace
}  // namespace cohort::topology
