#include "common/mail_type.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

TEST(MailType, ListsAndRepeatsAreOrEdAndNoneClears) {
    EXPECT_EQ(*parse_mail_type({"BEGIN,END"}), kMailBegin | kMailEnd);
    EXPECT_EQ(*parse_mail_type({"begin", "fail"}), kMailBegin | kMailFail);
    EXPECT_EQ(*parse_mail_type({"END", "NONE", "REQUEUE"}), kMailRequeue);
    EXPECT_EQ(*parse_mail_type({}), 0u);
    EXPECT_EQ(mail_type_name(*parse_mail_type({"ALL"})),
              "BEGIN,END,FAIL,REQUEUE,INVALID_DEPEND,STAGE_OUT");
    EXPECT_EQ(mail_type_name(*parse_mail_type({"TIME_LIMIT_80,ARRAY_TASKS"})),
              "TIME_LIMIT_80,ARRAY_TASKS");
    EXPECT_EQ(mail_type_name(0), "NONE");
}

// ALL is common in scripts; nothing it names goes without mail here.
TEST(MailType, AllNamesOnlyEventsThatSendMail) {
    EXPECT_EQ(*parse_mail_type({"ALL"}) & ~kMailSent, 0u);
    EXPECT_NE(*parse_mail_type({"TIME_LIMIT_90"}) & ~kMailSent, 0u);
}

TEST(MailType, AnUnknownEventIsNamedWithWhatIsAccepted) {
    auto bad = parse_mail_type({"BEGIN,ENDS"});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.status().message().rfind("--mail-type: invalid value 'BEGIN,ENDS' (accepted: "
                                           "comma-separated NONE, BEGIN",
                                           0),
              0u)
            << bad.status().message();
}

}  // namespace
}  // namespace cohort
